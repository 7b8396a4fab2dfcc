import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto, Scalar } from '#platform';
import { ADDRESS_LIMITS } from '../layer-address.js';

/** Query of GET /config-server/admin/layers (DESIGN 7). */
export class LayersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'only the layers of this host' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(ADDRESS_LIMITS.host)
  host?: string;
}
