import { Injectable } from '@nestjs/common';

/**
 * What features add to `GET /health/ready` beside the database check (the api's config store says how
 * many plaintext rows remain, DESIGN 17). Each part is read with the check and under its timeout.
 */
@Injectable()
export class ReadinessDetails {
  private readonly parts = new Map<string, () => Promise<unknown>>();

  add(name: string, read: () => Promise<unknown>): void {
    this.parts.set(name, read);
  }

  async read(): Promise<Record<string, unknown>> {
    const entries = await Promise.all([...this.parts].map(async ([name, read]) => [name, await read()] as const));
    return Object.fromEntries(entries);
  }
}
