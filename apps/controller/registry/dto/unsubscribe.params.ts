import { IsOptional, IsString, Length } from 'class-validator';

/** `discovery/unsubscribe` params. */
export class UnsubscribeParams {
  @IsString()
  @Length(1, 64)
  subscriptionId!: string;

  @IsOptional()
  @IsString()
  jwt?: string;
}
