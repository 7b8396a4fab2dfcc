import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional } from 'class-validator';
import { PageQueryDto, Scalar } from '#platform';
import { AddressQueryDto } from './address-query.dto.js';

/** Versions are PostgreSQL integers: a larger number can name no version and must not reach SQL (DESIGN 14). */
export const MAX_VERSION = 2_147_483_647;

/** A version written as a positive 32-bit integer in plain decimal (no sign, leading zero or space), else NaN. */
export const toVersion = (raw: string): number =>
  /^[1-9]\d{0,9}$/.test(raw) && Number(raw) <= MAX_VERSION ? Number(raw) : Number.NaN;

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
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_VERSION,
    description: 'the version whose content becomes current',
  })
  @Scalar(toVersion)
  @IsInt({ message: `version must be a positive integer up to ${MAX_VERSION}` })
  version!: number;
}
