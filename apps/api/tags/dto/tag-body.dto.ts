import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length, Matches, MaxLength, ValidateIf } from 'class-validator';
import { ID_PATTERN } from '#platform';

const NO_CONTROL_CHARS = /^[^\p{Cc}]*$/u;
const trim = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value.trim() : value);

/** Body of POST /tags and PUT /tags/{tagId} (DESIGN 4.1). */
export class TagBodyDto {
  @ApiPropertyOptional({ pattern: ID_PATTERN.source, description: 'generated (base64url UUIDv7) when omitted' })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'tagId must be 1..22 characters of A-Z, a-z, 0-9, _ and -' })
  tagId?: string;

  /** null or omitted: a global tag. */
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 22, description: 'null or omitted: a global tag' })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString()
  @Length(1, 22)
  @Matches(NO_CONTROL_CHARS, { message: 'hostId must not contain control characters' })
  hostId?: string | null;

  @ApiProperty({ minLength: 1, maxLength: 100, description: 'trimmed; unique case-insensitively' })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @Matches(NO_CONTROL_CHARS, { message: 'tagName must not contain control characters' })
  tagName!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 1024 })
  @ValidateIf((_, value) => value !== null && value !== undefined)
  @IsString()
  @MaxLength(1024)
  tagDesc?: string | null;
}
