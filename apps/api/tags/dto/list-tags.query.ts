import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto, PlainText, Scalar } from '#platform';

/** Query of GET /tags (DESIGN 4.2). */
export class ListTagsQuery extends PageQueryDto {
  @ApiPropertyOptional({ description: 'case-insensitive substring of the name' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(100)
  tagName?: string;

  @ApiPropertyOptional({ description: 'case-insensitive substring of the description' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(1024)
  @PlainText()
  tagDesc?: string;

  @ApiPropertyOptional({ description: 'exact host id' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(22)
  hostId?: string;

  @ApiPropertyOptional({ description: 'substring of name or description' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(1024)
  @PlainText()
  q?: string;

  @ApiPropertyOptional({
    description: 'comma list of tagName, tagDesc, updateTs, tagId; - prefix for descending',
    example: '-updateTs,tagName',
  })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(200)
  sort?: string;

  @ApiPropertyOptional({ enum: ['usage'], description: 'usage: add per-type counts of the entities you can see' })
  @IsOptional()
  @Scalar()
  @IsIn(['usage'])
  include?: 'usage';
}
