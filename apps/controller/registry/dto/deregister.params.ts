import { IsOptional, IsString, Length } from 'class-validator';

/** `service/deregister` params. */
export class DeregisterParams {
  @IsString()
  @Length(1, 64)
  runtimeInstanceId!: string;

  @IsOptional()
  @IsString()
  jwt?: string;
}
