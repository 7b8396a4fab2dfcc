import { ApiProperty } from '@nestjs/swagger';
import type { KidUse } from './encryption/key-rotation.js';

/** A key encryption key and how many data keys it wraps (DESIGN 17); never key material. */
export class KidView {
  @ApiProperty({ example: 'k-2026-11' })
  readonly kid!: string;

  @ApiProperty({ example: 1200, description: 'data keys wrapped under this kid' })
  readonly dataKeys!: number;

  @ApiProperty({ description: 'new data keys are wrapped under it (the first of the ring)' })
  readonly active!: boolean;

  @ApiProperty({ description: 'the key ring holds it; false: data keys need a kid the ring lacks' })
  readonly inRing!: boolean;
}

export class KeysView {
  @ApiProperty({
    type: [KidView],
    description: 'the active kid first, then the ring, then kids only the database names',
  })
  readonly keys!: KidView[];
}

export class RewrapView {
  @ApiProperty({ example: 'k-2026-11', description: 'the active kid every data key is now wrapped under' })
  readonly kid!: string;

  @ApiProperty({ example: 1200, description: 'data keys re-wrapped by this call' })
  readonly rewrapped!: number;
}

export const toKeysView = (uses: readonly KidUse[]): KeysView => ({ keys: uses.map((use) => ({ ...use })) });
