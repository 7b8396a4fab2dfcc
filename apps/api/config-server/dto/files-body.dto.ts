import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsObject } from 'class-validator';

/** Body of PUT /config-server/admin/files; names and base64 contents are checked by `decodeFiles()`. */
export class FilesBodyDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', format: 'byte' },
    example: { 'server.keystore': 'AAECAw==' },
  })
  @IsObject({ message: 'files must be an object of file name to base64 content' })
  // The map as sent: class-transformer would drop keys the target inherits (`toString`, `valueOf`, ...).
  @Transform(({ obj }: { obj: Record<string, unknown> }) => obj.files)
  files!: Record<string, unknown>;
}
