import { EntityBodyDto } from './entity-body.dto.js';
import { IdField, LineField, NameField, TextField } from './fields.js';

/** Body of POST /products and PUT /products/{productId}. */
export class ProductBodyDto extends EntityBodyDto {
  @IdField() productId?: string;
  @NameField(100) productName!: string;
  @LineField(50) productVersion?: string | null;
  @TextField(1024) productDesc?: string | null;
}
