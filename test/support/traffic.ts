import { setTimeout as delay } from 'node:timers/promises';
import type { RpcClient } from './controller.js';

/** One loop's tally in one phase: what each request answered, and how many steps it finished. */
interface Tally {
  iterations: number;
  readonly outcomes: Map<string, { count: number; ok: boolean }>;
}

/** What a loop's step uses to send requests; each answer is recorded under the phase it was sent in. */
export interface Probe {
  /** The parsed JSON body (null for an empty one) when `url` answered `expected`, else undefined. */
  http(label: string, expected: number, url: string, init?: RequestInit): Promise<unknown>;
  /** The result when `method` answered one, else undefined (the error's code is recorded). */
  rpc(client: RpcClient, method: string, params: unknown): Promise<Readonly<Record<string, unknown>> | undefined>;
}

/** Request loops tallied per phase; a step counts whatever it answered, so a broken route fails the verdict. */
export class Traffic {
  private phase: string;
  private stopped = false;
  private readonly tallies = new Map<string, Map<string, Tally>>();
  private readonly running: Promise<void>[] = [];
  private readonly names: string[] = [];

  constructor(first: string) {
    this.phase = first;
  }

  /** Requests sent from now on count under `phase`. */
  enter(phase: string): void {
    this.phase = phase;
  }

  /** Runs `step` again and again until `stop()`. */
  start(name: string, step: (probe: Probe, iteration: number) => Promise<void>): void {
    this.names.push(name);
    this.running.push(this.loop(name, step));
  }

  /** Every loop finished `iterations` steps in this phase, or `timeoutMs` passed (the verdict tells which). */
  async until(iterations: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.names.some((name) => this.tally(this.phase, name).iterations < iterations)) {
      await delay(50);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  /** Every unexpected answer and every loop short of `progress[phase]` steps; and all answers, phase by phase. */
  verdict(progress: Readonly<Record<string, number>>): { failures: string[]; summary: string } {
    const failures: string[] = [];
    const lines: string[] = [];
    for (const [phase, loops] of this.tallies) {
      lines.push(`${phase}:`);
      for (const [name, tally] of loops) {
        const answers = [...tally.outcomes].map(([what, { count }]) => `${what} x${count}`);
        lines.push(`  ${name} (${tally.iterations} steps): ${answers.join(', ')}`);
        for (const [what, { count, ok }] of tally.outcomes)
          if (!ok) failures.push(`${phase} ${name}: ${what} x${count}`);
      }
    }
    for (const [phase, least] of Object.entries(progress)) {
      for (const name of this.names) {
        const done = this.tally(phase, name).iterations;
        if (done < least) failures.push(`${phase} ${name}: ${done} steps, fewer than ${least}`);
      }
    }
    return { failures, summary: lines.join('\n') };
  }

  private tally(phase: string, name: string): Tally {
    let loops = this.tallies.get(phase);
    if (loops === undefined) this.tallies.set(phase, (loops = new Map<string, Tally>()));
    let tally = loops.get(name);
    if (tally === undefined) loops.set(name, (tally = { iterations: 0, outcomes: new Map() }));
    return tally;
  }

  private record(phase: string, name: string, what: string, ok: boolean): void {
    const outcomes = this.tally(phase, name).outcomes;
    const seen = outcomes.get(what);
    if (seen === undefined) outcomes.set(what, { count: 1, ok });
    else seen.count += 1;
  }

  private async loop(name: string, step: (probe: Probe, iteration: number) => Promise<void>): Promise<void> {
    for (let iteration = 0; !this.stopped; iteration += 1) {
      // The step counts in the phase it began in; each answer in the phase its request was sent in.
      const phase = this.phase;
      const probe: Probe = {
        http: async (label, expected, url, init) => {
          const sent = this.phase;
          const response = await fetch(url, init);
          const text = await response.text();
          this.record(sent, name, `${label} ${response.status}`, response.status === expected);
          if (response.status !== expected) return undefined;
          return text === '' ? null : (JSON.parse(text) as unknown);
        },
        rpc: async (client, method, params) => {
          const sent = this.phase;
          const answer = await client.call(method, params);
          this.record(sent, name, `${method} ${answer.error === undefined ? 'ok' : answer.error.code}`, !answer.error);
          return answer.result;
        },
      };
      try {
        await step(probe, iteration);
      } catch (error) {
        // No answer at all (a refused connection, an RPC timeout) is a failure of its own.
        this.record(this.phase, name, `no answer: ${(error as Error).message.split('\n')[0]}`, false);
      }
      this.tally(phase, name).iterations += 1;
    }
  }
}
