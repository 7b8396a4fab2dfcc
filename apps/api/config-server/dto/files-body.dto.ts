import { ApiProperty } from '@nestjs/swagger';
import { IsObject } from 'class-validator';
import { OpaqueJson } from '#platform';

/** Body of PUT /config-server/admin/files; names and base64 contents are checked by `decodeFiles()`. */
export class FilesBodyDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', format: 'byte' },
    example: { 'server.keystore': 'AAECAw==' },
  })
  @IsObject({ message: 'files must be an object of file name to base64 content' })
  // The map as sent: class-transformer would drop names every object inherits (`toString`, ...), Nest's pipe
  // `constructor`, `prototype` and `__proto__`.
  @OpaqueJson()
  files!: Record<string, unknown>;
}
