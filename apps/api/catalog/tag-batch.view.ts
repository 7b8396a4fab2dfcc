import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The outcome of one batch operation, at its index in the request. */
export class TagBatchResultView {
  @ApiProperty({ type: 'integer', example: 0 })
  readonly index!: number;

  @ApiProperty({ enum: [200, 400, 403, 404], description: 'what the single write would have answered' })
  readonly status!: number;

  @ApiPropertyOptional({ description: 'why it failed (the problem detail the single write would have sent)' })
  readonly detail?: string;
}

export class TagBatchView {
  @ApiProperty({ type: [TagBatchResultView], description: 'one per operation, in request order' })
  readonly results!: readonly TagBatchResultView[];
}
