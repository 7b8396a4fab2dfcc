import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Matches } from 'class-validator';
import { LineField, TextField } from '#platform';
import { CLIENT_ID_PATTERN } from '../client-id.js';

/** A scope or env value: one token, no spaces or control characters. */
const TOKEN_VALUE = /^[\x21-\x7e]{1,100}$/;

/** Body of `POST /oauth2/clients` (DESIGN 10). */
export class CreateClientDto {
  @ApiPropertyOptional({ type: String, pattern: CLIENT_ID_PATTERN.source, description: 'generated when omitted' })
  @IsOptional()
  @IsString()
  @Matches(CLIENT_ID_PATTERN, { message: '$property must be 1..100 characters of A-Z, a-z, 0-9, ., _ and -' })
  clientId?: string;

  @TextField(500)
  description?: string | null;

  /** The `host` claim of its tokens; required unless `scopes` holds portal.admin. */
  @LineField(255)
  host?: string | null;

  /** The `sid` claim of its tokens; required unless `scopes` holds portal.admin. */
  @LineField(255)
  sid?: string | null;

  @ApiPropertyOptional({ type: [String], description: 'env values it may ask for; empty: none' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @Matches(TOKEN_VALUE, { each: true, message: 'each value in $property must be 1..100 visible characters' })
  envs: string[] = [];

  @ApiPropertyOptional({ type: [String], description: 'e.g. portal.r; portal.admin makes an operator client' })
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(TOKEN_VALUE, { each: true, message: 'each value in $property must be 1..100 visible characters' })
  scopes!: string[];
}
