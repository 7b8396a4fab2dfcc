import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Length,
  ValidateNested,
} from 'class-validator';
import { ENTITY_TYPE_NAMES } from '#database';
import { NoControlChars, Scalar } from '#platform';
import { TagIdsField } from './fields.js';

/** Operations one `POST /tags/batch` may carry (DESIGN 12). */
export const MAX_BATCH_OPERATIONS = 1000;
/** Its body limit: 1,000 operations of 50 ids fit (the other routes keep 1 MiB). */
export const BATCH_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** One operation: add or remove links between one entity and some tags. */
export class TagBatchOperationDto {
  @ApiProperty({ enum: ['add', 'remove'] })
  @IsIn(['add', 'remove'])
  op!: 'add' | 'remove';

  @ApiProperty({ enum: ENTITY_TYPE_NAMES })
  @IsIn(ENTITY_TYPE_NAMES)
  entityType!: string;

  @ApiProperty({ example: 'pet', description: "an id that cannot exist is that operation's 404" })
  @IsString()
  @Length(1, 64)
  @NoControlChars()
  entityId!: string;

  @TagIdsField(true) tagIds!: string[];
}

/** Body of POST /tags/batch. */
export class TagBatchDto {
  @ApiProperty({ type: [TagBatchOperationDto], minItems: 1, maxItems: MAX_BATCH_OPERATIONS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH_OPERATIONS)
  @ValidateNested({ each: true })
  @Type(() => TagBatchOperationDto)
  operations!: TagBatchOperationDto[];
}

/** Query of POST /tags/batch. */
export class TagBatchQuery {
  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description: 'true: all operations or none (409 naming the first failure)',
  })
  @IsOptional()
  @Scalar((value) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsIn([true, false], { message: 'atomic must be true or false' })
  atomic = false;
}
