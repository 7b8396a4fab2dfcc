import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Min } from 'class-validator';
import { PageQueryDto, Scalar, toInt } from '#platform';
import { AddressQueryDto } from './address-query.dto.js';

/** Query of GET /config-server/admin/history: a layer address and a page (DESIGN 14). */
export class HistoryQueryDto extends IntersectionType(AddressQueryDto, PageQueryDto) {}

/** Query of GET /config-server/admin/history/{version}: a layer address, and file contents on request. */
export class VersionQueryDto extends AddressQueryDto {
  @ApiPropertyOptional({ enum: ['files'], description: 'files: add the base64 file contents (fileContents)' })
  @IsOptional()
  @Scalar()
  @IsIn(['files'], { message: 'include must be files' })
  include?: 'files';
}

/** Query of POST /config-server/admin/rollback: a layer address and the version to bring back. */
export class RollbackQueryDto extends AddressQueryDto {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'the version whose content becomes current' })
  @Scalar(toInt)
  @IsInt({ message: 'version must be a positive integer' })
  @Min(1, { message: 'version must be a positive integer' })
  version!: number;
}
