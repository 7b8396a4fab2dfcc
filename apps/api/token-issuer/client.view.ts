import { ApiProperty } from '@nestjs/swagger';
import type { OAuthClient } from '#database';
import { isoTime, PageFields } from '#platform';

/** A client record as the admin API shows it: never a secret or its hash. */
export class ClientView {
  @ApiProperty() clientId!: string;
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty({ type: String, nullable: true }) host!: string | null;
  @ApiProperty({ type: String, nullable: true }) sid!: string | null;
  @ApiProperty({ type: [String] }) envs!: string[];
  @ApiProperty({ type: [String] }) scopes!: string[];
  @ApiProperty({ type: String, nullable: true, description: 'the previous secret works until then' })
  previousSecretUntil!: string | null;
  @ApiProperty({ type: String, nullable: true }) updateUser!: string | null;
  @ApiProperty() createdTs!: string;
  @ApiProperty() updateTs!: string;
}

/** The answer of a create or a rotation: the only time the secret is shown. */
export class ClientWithSecretView extends ClientView {
  @ApiProperty({ description: 'shown once; store it now' }) clientSecret!: string;
}

export class ClientPage extends PageFields {
  @ApiProperty({ type: [ClientView] }) clients!: ClientView[];
}

export function toClientView(client: OAuthClient): ClientView {
  return {
    clientId: client.clientId,
    description: client.description,
    host: client.host,
    sid: client.sid,
    envs: client.envs,
    scopes: client.scopes,
    previousSecretUntil: client.previousSecretUntil ? isoTime(client.previousSecretUntil) : null,
    updateUser: client.updateUser,
    createdTs: isoTime(client.createdTs),
    updateTs: isoTime(client.updateTs),
  };
}
