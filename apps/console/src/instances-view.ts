import { query, request } from './api.js';
import { field, h, replace, table, time } from './dom.js';
import { followStream } from './stream.js';
import { loadWithRetry, type ViewContext } from './view.js';

interface Instance {
  readonly runtimeInstanceId: string;
  readonly hostId: string;
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly version: string | null;
  readonly protocol: string | null;
  readonly address: string | null;
  readonly port: number | null;
  readonly status: string;
  readonly connectedTs: string;
  readonly lastSeenTs: string;
  readonly disconnectedTs: string | null;
  readonly controllerId: string;
}

interface InstancePage {
  readonly total: number;
  readonly instances: readonly Instance[];
}

const LIMIT = 200;
/** Changes arriving together cause one re-read. */
const COALESCE_MS = 100;

/** Instances: the shared registry, re-read on every change event from any controller replica (DESIGN 13). */
export function instancesView(root: HTMLElement, context: ViewContext): void {
  const { identity } = context;
  const status = h(
    'select',
    { name: 'status' },
    h('option', { value: 'connected' }, 'Connected'),
    h('option', { value: '' }, 'All, with disconnected'),
  );
  const errors = h('div', { class: 'errors' });
  const list = h('div', { class: 'list', 'aria-live': 'polite' });
  let timer: number | undefined;

  // Live once a read succeeded: the stream below triggers every later read.
  const load = (): Promise<void> =>
    loadWithRetry(
      context,
      errors,
      async () => {
        const { body } = await request<InstancePage>(
          identity.token,
          'GET',
          `/registry/instances${query({ status: status.value, limit: LIMIT })}`,
          {
            signal: context.signal,
          },
        );
        const rows = body.instances.map((instance) => [
          h('span', { class: 'name' }, instance.serviceId),
          instance.envTag ?? '—',
          instance.hostId,
          instance.address === null
            ? '—'
            : `${instance.protocol ?? ''}${instance.protocol ? '://' : ''}${instance.address}:${instance.port ?? ''}`,
          instance.version ?? '—',
          h('span', { class: `status ${instance.status}` }, instance.status),
          time(instance.connectedTs),
          instance.disconnectedTs === null ? time(instance.lastSeenTs) : `gone ${time(instance.disconnectedTs)}`,
          h('code', {}, instance.runtimeInstanceId),
        ]);
        replace(
          list,
          body.total === 0
            ? h('p', {}, 'No instances.')
            : table(
                `${body.total} instance${body.total === 1 ? '' : 's'}${body.total > LIMIT ? ` (the first ${LIMIT})` : ''}`,
                ['Service', 'Env', 'Host', 'Address', 'Version', 'State', 'Connected', 'Last seen', 'Instance id'],
                rows,
              ),
        );
      },
      'live',
    );

  const reload = (): void => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void load(), COALESCE_MS);
  };
  status.addEventListener('change', () => void load());
  replace(
    root,
    h('h1', {}, 'Instances'),
    h('p', {}, 'Every runtime registered with any controller replica; updates as they come and go.'),
    h('div', { class: 'controls' }, field('Show', status)),
    errors,
    list,
  );

  void followStream(
    identity.token,
    '/registry/changes',
    {
      // ready (after every reconnect), change and resync all mean: read the list again.
      onEvent: reload,
      onConnection: (connected) => {
        if (!connected) context.setConnection('reconnecting');
      },
      onRefused: (error) => {
        if (error.status === 401) context.signOut(error.detail);
        else replace(errors, h('p', { class: 'error', role: 'alert' }, error.detail));
      },
    },
    context.signal,
  );
}
