import type { EntityManager } from 'typeorm';
import { TagRepository } from '#database';

/** A node of PostgreSQL's EXPLAIN (FORMAT JSON) plan: the fields the specs read, each present only on some nodes. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Parent Relationship'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** A node of EXPLAIN (ANALYZE, FORMAT JSON): every node says what it returned and how often it ran. */
export interface AnalyzedPlanNode extends PlanNode {
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: AnalyzedPlanNode[];
}

/** A data source, or a transaction's manager, to run the EXPLAIN on (settings made in a transaction apply). */
type Queries = Pick<EntityManager, 'query'>;

/** The plan's nodes in one list, each before those under it, so a spec can search them all. */
export const flatten = <T extends { Plans?: T[] }>(node: T): T[] => [node, ...(node.Plans ?? []).flatMap(flatten)];

/** The nodes of the plan PostgreSQL picks for `sql`, without running it. */
export async function explain(on: Queries, sql: string, parameters: readonly unknown[]): Promise<PlanNode[]> {
  const [result] = await on.query<[{ 'QUERY PLAN': [{ Plan: PlanNode }] }]>(`explain (format json) ${sql}`, [
    ...parameters,
  ]);
  return flatten(result['QUERY PLAN'][0].Plan);
}

/** The nodes of `sql`'s plan as it ran, with the rows each node returned. */
export async function explainAnalyze(
  on: Queries,
  sql: string,
  parameters: readonly unknown[],
): Promise<AnalyzedPlanNode[]> {
  const [result] = await on.query<[{ 'QUERY PLAN': [{ Plan: AnalyzedPlanNode }] }]>(
    `explain (analyze, format json) ${sql}`,
    [...parameters],
  );
  return flatten(result['QUERY PLAN'][0].Plan);
}

/** The repository as it is, keeping the statements it sends (text and parameters) for EXPLAIN. */
export class StatementsOfTags extends TagRepository {
  readonly sent: [string, readonly unknown[]][] = [];
  protected override async rows<T>(sql: string, parameters: readonly unknown[] = []): Promise<T[]> {
    this.sent.push([sql, parameters]);
    return super.rows<T>(sql, parameters);
  }
}
