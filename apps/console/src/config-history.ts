import { query, request } from './api.js';
import { field, h, replace, table, time } from './dom.js';
import { showFailure, type ViewContext } from './view.js';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** A layer's address as the admin endpoints take it (absent parts null). */
export interface HistoryAddress {
  readonly host: string;
  readonly serviceId: string | null;
  readonly productId: string | null;
  readonly productVersion: string | null;
  readonly envTag: string | null;
}

interface Change {
  readonly added: string[];
  readonly changed: string[];
  readonly removed: string[];
}

interface Version {
  readonly version: number;
  readonly at: string;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly change: Change;
}

interface VersionContent extends Version {
  readonly properties: Readonly<Record<string, Json>>;
  readonly files: { readonly cert: Record<string, string>; readonly file: Record<string, string> };
}

const HISTORY = '/config-server/admin/history';
const PAGE = 20;
/** What fetch can send in a header (ISO-8859-1 without control characters); the api takes 200 characters. */
const REASON_TEXT = /^[\u0020-\u007e\u00a0-\u00ff]{0,200}$/;

/** The query string naming one layer (DESIGN 7), plus `extra` parameters. */
export const addressQuery = (address: HistoryAddress, extra: Record<string, string | number> = {}): string =>
  query({
    host: address.host,
    serviceId: address.serviceId ?? undefined,
    productId: address.productId ?? undefined,
    productVersion: address.productVersion ?? undefined,
    envTag: address.envTag ?? undefined,
    ...extra,
  });

const summary = (change: Change): string =>
  [
    change.added.length > 0 ? `added ${change.added.join(', ')}` : '',
    change.changed.length > 0 ? `changed ${change.changed.join(', ')}` : '',
    change.removed.length > 0 ? `removed ${change.removed.join(', ')}` : '',
  ]
    .filter((part) => part !== '')
    .join('; ') || 'no change';

/** A version's contents as one flat map: property keys to JSON, cert/<name> and file/<name> to their hash. */
function flatten(content: VersionContent | undefined): Map<string, string> {
  const flat = new Map<string, string>();
  if (content === undefined) return flat;
  for (const [key, value] of Object.entries(content.properties)) flat.set(key, JSON.stringify(value));
  for (const kind of ['cert', 'file'] as const) {
    for (const [name, sha] of Object.entries(content.files[kind]))
      flat.set(`${kind}/${name}`, `sha256 ${sha.slice(0, 12)}…`);
  }
  return flat;
}

/**
 * A layer's history (DESIGN 14), on request: its versions newest first, the difference between a version and the one
 * before (with property values: an admin may read the layer anyway), and rollback after a confirmation,
 * sent with the layer's current version as If-Match.
 */
export function historyPanel(
  address: HistoryAddress,
  currentEtag: string | null,
  context: ViewContext,
  onRolledBack: () => void,
  expanded = false,
): HTMLElement {
  const { identity } = context;
  const errors = h('div', { class: 'errors' });
  const list = h('div', { class: 'list' });
  const diff = h('div', { class: 'detail' });
  const panel = h('section', { 'aria-label': 'History' }, h('h3', {}, 'History'), errors, list, diff);

  const get = <T>(path: string) => request<T>(identity.token, 'GET', path, { signal: context.signal });

  async function load(): Promise<void> {
    try {
      const { body } = await get<{ total: number; versions: Version[] }>(
        `${HISTORY}${addressQuery(address, { limit: PAGE })}`,
      );
      const rows = body.versions.map((v) => [
        String(v.version),
        time(v.at),
        v.actor ?? '—',
        v.reason ?? '—',
        summary(v.change),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              onclick: () => void showDiff(v.version),
              'aria-label': `Difference of version ${v.version}`,
            },
            'Difference',
          ),
          v === body.versions[0]
            ? null
            : h(
                'button',
                {
                  type: 'button',
                  onclick: () => confirmRollback(v),
                  'aria-label': `Roll back to version ${v.version}`,
                },
                'Roll back…',
              ),
        ),
      ]);
      replace(
        list,
        body.total === 0
          ? h('p', {}, 'No versions recorded for this layer.')
          : table(
              `${body.total} versions, newest first${body.total > PAGE ? ` (the last ${PAGE} shown)` : ''}`,
              ['Version', 'When', 'Who', 'Reason', 'Change', 'Action'],
              rows,
            ),
      );
    } catch (error) {
      showFailure(context, errors, error);
    }
  }

  /** Version n against n-1: each name added, changed or removed, with its value before and after. */
  async function showDiff(version: number): Promise<void> {
    try {
      const path = (n: number) => `${HISTORY}/${n}${addressQuery(address)}`;
      const [after, before] = await Promise.all([
        get<VersionContent>(path(version)),
        version > 1 ? get<VersionContent>(path(version - 1)).catch(() => undefined) : Promise.resolve(undefined),
      ]);
      const [old, now] = [flatten(before?.body), flatten(after.body)];
      const keys = [...new Set([...old.keys(), ...now.keys()])].sort();
      const rows = keys
        .filter((key) => old.get(key) !== now.get(key))
        .map((key) => [
          h('code', {}, key),
          !old.has(key) ? 'added' : !now.has(key) ? 'removed' : 'changed',
          h('code', {}, old.get(key) ?? '—'),
          h('code', {}, now.get(key) ?? '—'),
        ]);
      const caption =
        before === undefined && version > 1
          ? `Version ${version} (version ${version - 1} is no longer kept: every name shown as added)`
          : `Version ${version} against version ${version - 1}`;
      replace(
        diff,
        rows.length === 0
          ? h('p', {}, `Version ${version} changed nothing.`)
          : table(caption, ['Name', 'Change', 'Before', 'After'], rows),
      );
    } catch (error) {
      showFailure(context, errors, error);
    }
  }

  function confirmRollback(target: Version): void {
    const reason = h('input', { name: 'reason', autocomplete: 'off', maxlength: 200 });
    const yes = h('button', { type: 'button', class: 'danger' }, `Roll back to version ${target.version}`);
    const no = h('button', { type: 'button' }, 'Cancel');
    const box = h(
      'div',
      { class: 'confirm', role: 'group', 'aria-label': 'Confirm rollback' },
      h(
        'p',
        {},
        `Make the content of version ${target.version} current again? It becomes a new version; ` +
          'runtimes bound to this layer are told.',
      ),
      field('Reason (optional)', reason),
      yes,
      no,
    );
    no.addEventListener('click', () => replace(diff));
    yes.addEventListener('click', () => {
      const text = reason.value.trim();
      if (!REASON_TEXT.test(text)) {
        replace(
          errors,
          h('p', { class: 'error', role: 'alert' }, 'The reason must be Latin-1 text without control characters.'),
        );
        return;
      }
      request(
        identity.token,
        'POST',
        `/config-server/admin/rollback${addressQuery(address, { version: target.version })}`,
        { ifMatch: currentEtag ?? 'W/"0"', ...(text === '' ? {} : { headers: { 'x-change-reason': text } }) },
      ).then(onRolledBack, (error: unknown) => showFailure(context, errors, error));
    });
    replace(diff, box);
    yes.focus();
  }

  // Loaded on request: the layer's page stays about its current content until the operator asks.
  if (expanded) {
    void load();
    return panel;
  }
  const show = h('button', { type: 'button' }, 'Show history');
  show.addEventListener('click', () => {
    show.remove();
    void load();
  });
  panel.insertBefore(show, errors);
  return panel;
}
