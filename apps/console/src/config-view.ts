import { query, request } from './api.js';
import { bytes, count, field, h, replace, table } from './dom.js';
import { addressQuery, historyPanel, type HistoryAddress } from './config-history.js';
import { loadWithRetry, showFailure, type ViewContext } from './view.js';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

type Address = HistoryAddress;

interface LayerSummary extends Address {
  readonly aggregateVersion: number;
  readonly properties: number;
  readonly certs: number;
  readonly files: number;
}

interface Layer extends Address {
  readonly properties: Readonly<Record<string, Json>>;
}

interface LayerFiles {
  readonly files: Readonly<Record<string, string>>;
}

const LIMIT = 200;
const PROPERTIES = '/config-server/admin/properties';
const FILES = '/config-server/admin/files';
const FILE_KINDS = [
  ['cert', 'Cert'],
  ['file', 'File'],
] as const;

/** The decoded size of base64 content, without decoding it. */
function decodedSize(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

function label(address: Address): string {
  const owner =
    address.serviceId !== null
      ? `service ${address.serviceId}`
      : `product ${address.productId ?? ''} ${address.productVersion ?? ''}`;
  return `${owner} · ${address.envTag === null ? 'all environments' : `env ${address.envTag}`} (host ${address.host})`;
}

/** The layers a runtime of this address reads, lowest first (DESIGN 7): all environments, then its own. */
function stackOf(address: Address, product: Address | undefined): Address[] {
  const ladder = (base: Address): Address[] => [
    { ...base, envTag: null },
    ...(address.envTag === null ? [] : [{ ...base, envTag: address.envTag }]),
  ];
  return [...(product === undefined ? [] : ladder(product)), ...ladder(address)];
}

/**
 * Config: the layer list, a layer's merged result with each key's source layer, editing with If-Match
 * (DESIGN 13), and the layer's history with differences and rollback (DESIGN 14).
 */
export function configView(root: HTMLElement, context: ViewContext): void {
  const { identity } = context;
  const host = h('input', { name: 'host', autocomplete: 'off', value: identity.host ?? '' });
  // A host-bound config admin manages only its own host's layers (DESIGN 16): the host is not a choice.
  host.readOnly = identity.host !== null;
  const errors = h('div', { class: 'errors' });
  const list = h('div', { class: 'list' });
  const detail = h('div', { class: 'detail' });
  let products: LayerSummary[] = [];

  const load = (): Promise<void> =>
    loadWithRetry(context, errors, async () => {
      const { body } = await request<{ total: number; layers: LayerSummary[] }>(
        identity.token,
        'GET',
        `/config-server/admin/layers${query({ host: host.value.trim(), limit: LIMIT })}`,
        { signal: context.signal },
      );
      products = body.layers.filter((layer) => layer.productId !== null && layer.envTag === null);
      const rows = body.layers.map((layer) => [
        label(layer),
        [
          count(layer.properties, 'property', 'properties'),
          count(layer.certs, 'cert'),
          count(layer.files, 'file'),
        ].join(', '),
        String(layer.aggregateVersion),
        h('button', { type: 'button', onclick: () => void open(layer), 'aria-label': `Open ${label(layer)}` }, 'Open'),
      ]);
      replace(
        list,
        body.total === 0
          ? h('p', {}, 'No config layers.')
          : table(`${body.total} layers`, ['Address', 'Contents', 'Version', 'Action'], rows),
      );
    });

  async function open(address: Address, product?: Address, showHistory = false): Promise<void> {
    try {
      const stack = stackOf(address, product);
      const [layers, files] = await Promise.all([
        Promise.all(
          stack.map((layer) =>
            request<Layer>(identity.token, 'GET', `${PROPERTIES}${addressQuery(layer)}`, { signal: context.signal }),
          ),
        ),
        Promise.all(
          FILE_KINDS.map(([kind]) =>
            request<LayerFiles>(identity.token, 'GET', `${FILES}${addressQuery(address)}&kind=${kind}`, {
              signal: context.signal,
            }),
          ),
        ),
      ]);
      const merged = new Map<string, { value: Json; from: string }>();
      layers.forEach((layer, index) => {
        for (const [key, value] of Object.entries(layer.body.properties))
          merged.set(key, { value, from: label(stack[index] ?? address) });
      });
      const own = layers.at(-1);
      replace(detail, h('h2', {}, label(address)));
      if (address.serviceId !== null && products.length > 0) {
        const picker = h(
          'select',
          { name: 'product' },
          h('option', { value: '' }, 'none'),
          ...products.map((p, index) =>
            h(
              'option',
              { value: String(index), selected: p === product },
              `${p.productId ?? ''} ${p.productVersion ?? ''}`,
            ),
          ),
        );
        picker.addEventListener(
          'change',
          () => void open(address, picker.value === '' ? undefined : products[Number(picker.value)]),
        );
        detail.append(
          field('Product layers beneath (as a runtime naming productId and productVersion reads them)', picker),
        );
      }
      const keys = [...merged.keys()].sort();
      detail.append(
        keys.length === 0
          ? h('p', {}, 'No properties in these layers.')
          : table(
              'Merged result: the value a runtime reads, and the layer it comes from',
              ['Key', 'Value', 'From layer'],
              keys.map((key) => {
                const entry = merged.get(key);
                return [h('code', {}, key), h('code', {}, JSON.stringify(entry?.value)), entry?.from ?? ''];
              }),
            ),
      );
      detail.append(fileList(files.map((response) => response.body)));
      if (own !== undefined) {
        detail.append(editor(address, own.body, own.etag));
        detail.append(
          historyPanel(
            address,
            own.etag,
            context,
            () => void Promise.all([open(address, product, true), load()]),
            showHistory,
          ),
        );
      }
    } catch (error) {
      showFailure(context, errors, error);
    }
  }

  /** The layer's own certs and files by name and size (their content is for runtimes, not this page). */
  function fileList(kinds: readonly LayerFiles[]): HTMLElement {
    const rows = kinds.flatMap((listing, index) =>
      Object.entries(listing.files)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, content]) => [FILE_KINDS[index]?.[1] ?? '', h('code', {}, name), bytes(decodedSize(content))]),
    );
    return rows.length === 0
      ? h('p', {}, 'No certs or files in this layer.')
      : table('This layer’s certs and files', ['Kind', 'Name', 'Size'], rows);
  }

  /** The layer's own properties as JSON, saved with the version it was read at: a stale save gets 412 in words. */
  function editor(address: Address, layer: Layer, etag: string | null): HTMLElement {
    const text = h('textarea', { name: 'properties', rows: 12, spellcheck: 'false' });
    text.value = JSON.stringify(layer.properties, null, 2);
    const formErrors = h('div', { class: 'errors' });
    const ifMatch = etag ?? undefined;
    const save = (event: Event): void => {
      event.preventDefault();
      let properties: unknown;
      try {
        properties = JSON.parse(text.value);
      } catch (error) {
        replace(formErrors, h('p', { class: 'error', role: 'alert' }, `Not JSON: ${(error as Error).message}`));
        return;
      }
      request(identity.token, 'PUT', `${PROPERTIES}${addressQuery(address)}`, {
        body: { properties },
        ...(ifMatch ? { ifMatch } : {}),
      }).then(
        () => Promise.all([open(address), load()]),
        (error: unknown) => showFailure(context, formErrors, error),
      );
    };
    const remove = (): void => {
      const yes = h('button', { type: 'button', class: 'danger' }, 'Delete the layer');
      yes.addEventListener('click', () => {
        request(identity.token, 'DELETE', `${PROPERTIES}${addressQuery(address)}`, ifMatch ? { ifMatch } : {}).then(
          () => {
            replace(detail);
            void load();
          },
          (error: unknown) => showFailure(context, formErrors, error),
        );
      });
      replace(formErrors, h('p', {}, `Delete every property of ${label(address)}?`), yes);
      yes.focus();
    };
    return h(
      'form',
      { 'aria-label': 'Edit layer', onsubmit: save },
      h('h3', {}, 'This layer’s own properties'),
      field('Properties (JSON object of configName.propertyName to value)', text),
      formErrors,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit' }, 'Save layer'),
        h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete…'),
      ),
    );
  }

  /** An address not in the list yet: a new layer is written on the first save. */
  const newService = h('input', { name: 'serviceId', autocomplete: 'off' });
  const newEnv = h('input', { name: 'envTag', autocomplete: 'off' });
  const opener = h(
    'form',
    {
      class: 'controls',
      'aria-label': 'Open a service layer',
      onsubmit: (event: Event) => {
        event.preventDefault();
        void open({
          host: host.value.trim(),
          serviceId: newService.value.trim(),
          productId: null,
          productVersion: null,
          envTag: newEnv.value.trim() || null,
        });
      },
    },
    field('Service id', newService),
    field('Env (empty: all)', newEnv),
    h('button', { type: 'submit' }, 'Open service layer'),
  );
  const filter = h(
    'form',
    {
      class: 'controls',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        void load();
      },
    },
    field('Host', host),
    h('button', { type: 'submit' }, 'List layers'),
  );
  replace(root, h('h1', {}, 'Config'), filter, errors, list, opener, detail);
  void load();
}
