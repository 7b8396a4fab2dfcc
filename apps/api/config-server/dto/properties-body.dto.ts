import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsObject } from 'class-validator';

/** Body of PUT /config-server/admin/properties; keys and values are checked by `checkProperties()`. */
export class PropertiesBodyDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { 'server.httpPort': 8443, 'server.enableHttps': true },
  })
  @IsObject({ message: 'properties must be an object of configName.propertyName keys' })
  // The map as sent: class-transformer would drop keys the target inherits (`toString`, `valueOf`, ...).
  @Transform(({ obj }: { obj: Record<string, unknown> }) => obj.properties)
  properties!: Record<string, unknown>;
}
