import { PickType } from '@nestjs/swagger';
import { IsOptional, IsString, Length } from 'class-validator';
import { OpaqueJson } from '#platform';
import { RegisterParams } from './register.params.js';

/**
 * `service/update_metadata` params (DESIGN 8): the fields of `service/register` a runtime may change while
 * registered, validated by the very same rules (PickType keeps their decorators). An omitted or null field
 * stays as it is; `tags` replaces the whole map.
 */
export class UpdateMetadataParams extends PickType(RegisterParams, ['version', 'protocol', 'port', 'tags', 'jwt']) {
  /** Only this registration of the socket's; omitted: every registration the socket holds. */
  @IsOptional()
  @IsString()
  @Length(1, 64)
  runtimeInstanceId?: string;
}

// PickType copies class-validator's and class-transformer's rules, not other metadata: `tags` stays opaque here too.
OpaqueJson()(UpdateMetadataParams.prototype, 'tags');
