import { IdColumn, TaggableEntity, TaggableTable, TextColumn } from './taggable.entity.js';

/** A product (table `product`, DESIGN 5.1). */
@TaggableTable('product', 'ix_product_name_keyset')
export class ProductEntity extends TaggableEntity {
  @IdColumn('product') productId!: string;
  @TextColumn('product_name', 100, false) productName!: string;
  @TextColumn('product_version', 50) productVersion!: string | null;
  @TextColumn('product_desc', 1024) productDesc!: string | null;
}
