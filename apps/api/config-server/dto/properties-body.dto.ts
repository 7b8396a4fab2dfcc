import { ApiProperty } from '@nestjs/swagger';
import { IsObject } from 'class-validator';
import { OpaqueJson } from '#platform';

/** Body of PUT /config-server/admin/properties; keys and values are checked by `checkProperties()`. */
export class PropertiesBodyDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { 'server.httpPort': 8443, 'server.enableHttps': true },
  })
  @IsObject({ message: 'properties must be an object of configName.propertyName keys' })
  // The map as sent: class-transformer would drop names every object inherits (`toString`, ...), Nest's pipe
  // `constructor`, `prototype` and `__proto__`.
  @OpaqueJson()
  properties!: Record<string, unknown>;
}
