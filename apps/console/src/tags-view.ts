import { query, request, versionTag } from './api.js';
import { field, h, replace, table, time, type Child } from './dom.js';
import { mayCreateTags, mayWriteTag } from './capabilities.js';
import { loadWithRetry, showFailure, type ViewContext } from './view.js';

interface Tag {
  readonly tagId: string;
  readonly hostId: string | null;
  readonly tagName: string;
  readonly tagDesc: string | null;
  readonly updateUser: string | null;
  readonly updateTs: string;
  readonly aggregateVersion: number;
  readonly usage?: Readonly<Record<string, number>>;
}

interface TagPage {
  readonly total: number;
  readonly tags: readonly Tag[];
}

interface EntityPage {
  readonly total: number;
  readonly entities: readonly { entityType: string; entityId: string }[];
}

const PAGE_SIZE = 20;
const SORTS: readonly [string, string][] = [
  ['tagName', 'Name A–Z'],
  ['-tagName', 'Name Z–A'],
  ['-updateTs', 'Recently changed'],
  ['updateTs', 'Least recently changed'],
];

function usageText(usage: Readonly<Record<string, number>> | undefined): string {
  const parts = Object.entries(usage ?? {}).filter(([, count]) => count > 0);
  return parts.length === 0 ? 'unused' : parts.map(([type, count]) => `${type} ${count}`).join(', ');
}

/** Tags: search, sort, page, create, edit with If-Match, delete with a confirmation, usage, entities (DESIGN 13). */
export function tagsView(root: HTMLElement, context: ViewContext): void {
  const { identity } = context;
  // Offered as the api allows them (DESIGN 16): tags:write for the token's own host, tags:admin for global tags.
  const writable = (tag: Tag): boolean => mayWriteTag(identity, tag.hostId);
  let offset = 0;
  const search = h('input', { type: 'search', name: 'q', autocomplete: 'off' });
  const sort = h('select', { name: 'sort' }, ...SORTS.map(([value, label]) => h('option', { value }, label)));
  const errors = h('div', { class: 'errors' });
  const editor = h('div', { class: 'editor' });
  const detail = h('div', { class: 'detail' });
  const list = h('div', { class: 'list' });
  const pager = h('div', { class: 'pager' });

  const load = (): Promise<void> =>
    loadWithRetry(context, errors, async () => {
      const parameters = { q: search.value.trim(), sort: sort.value, offset, limit: PAGE_SIZE, include: 'usage' };
      const { body } = await request<TagPage>(identity.token, 'GET', `/tags${query(parameters)}`, {
        signal: context.signal,
      });
      show(body);
    });

  function show(page: TagPage): void {
    const rows = page.tags.map((tag): Child[] => [
      h('span', { class: 'name' }, tag.tagName),
      tag.tagDesc ?? '',
      tag.hostId ?? 'global',
      usageText(tag.usage),
      `${time(tag.updateTs)} by ${tag.updateUser ?? '—'}`,
      String(tag.aggregateVersion),
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          { type: 'button', onclick: () => void entities(tag), 'aria-label': `Entities of ${tag.tagName}` },
          'Entities',
        ),
        writable(tag) &&
          h('button', { type: 'button', onclick: () => edit(tag), 'aria-label': `Edit ${tag.tagName}` }, 'Edit'),
        writable(tag) &&
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: () => confirmDelete(tag),
              'aria-label': `Delete ${tag.tagName}`,
            },
            'Delete',
          ),
      ),
    ]);
    replace(
      list,
      page.tags.length === 0
        ? h('p', {}, 'No tags match.')
        : table(
            `Tags ${offset + 1}–${offset + page.tags.length} of ${page.total}`,
            ['Name', 'Description', 'Host', 'Used by', 'Changed', 'Version', 'Actions'],
            rows,
          ),
    );
    replace(
      pager,
      h(
        'button',
        {
          type: 'button',
          disabled: offset === 0,
          onclick: () => ((offset = Math.max(0, offset - PAGE_SIZE)), void load()),
        },
        'Previous page',
      ),
      h(
        'button',
        {
          type: 'button',
          disabled: offset + PAGE_SIZE >= page.total,
          onclick: () => ((offset += PAGE_SIZE), void load()),
        },
        'Next page',
      ),
    );
  }

  /** One form for create (no tag) and edit: the edit sends the version it showed, so a stale edit gets 412. */
  function edit(tag?: Tag): void {
    const name = h('input', { name: 'tagName', required: true, maxlength: 100, value: tag?.tagName ?? '' });
    const desc = h('textarea', { name: 'tagDesc', rows: 2, maxlength: 1024 });
    desc.value = tag?.tagDesc ?? '';
    const host = h('input', {
      name: 'hostId',
      maxlength: 22,
      value: tag === undefined ? (identity.host ?? '') : (tag.hostId ?? ''),
    });
    // An edit keeps the tag's host; a new tag is global only for tags:admin, else the token's own host.
    host.disabled = tag !== undefined || !mayWriteTag(identity, null);
    const formErrors = h('div', { class: 'errors' });
    const form = h(
      'form',
      {
        'aria-label': tag === undefined ? 'New tag' : `Edit ${tag.tagName}`,
        onsubmit: (event: Event) => {
          event.preventDefault();
          const body = {
            tagName: name.value,
            tagDesc: desc.value === '' ? null : desc.value,
            hostId: host.value.trim() === '' ? null : host.value.trim(),
          };
          const saving =
            tag === undefined
              ? request<Tag>(identity.token, 'POST', '/tags', { body })
              : request<Tag>(identity.token, 'PUT', `/tags/${encodeURIComponent(tag.tagId)}`, {
                  body,
                  ifMatch: versionTag(tag.aggregateVersion),
                });
          saving.then(
            () => {
              replace(editor);
              void load();
            },
            (error: unknown) => showFailure(context, formErrors, error),
          );
        },
      },
      h('h2', {}, tag === undefined ? 'New tag' : `Edit “${tag.tagName}” (version ${tag.aggregateVersion})`),
      field('Name', name),
      field('Description', desc),
      field(mayWriteTag(identity, null) ? 'Host (empty: global)' : 'Host', host),
      formErrors,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit' }, 'Save'),
        h('button', { type: 'button', onclick: () => replace(editor) }, 'Cancel'),
      ),
    );
    replace(editor, form);
    name.focus();
  }

  function confirmDelete(tag: Tag): void {
    const formErrors = h('div', { class: 'errors' });
    const remove = (): void => {
      request(identity.token, 'DELETE', `/tags/${encodeURIComponent(tag.tagId)}`, {
        ifMatch: versionTag(tag.aggregateVersion),
      }).then(
        () => {
          replace(editor);
          void load();
        },
        (error: unknown) => showFailure(context, formErrors, error),
      );
    };
    const yes = h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete');
    replace(
      editor,
      h(
        'section',
        { class: 'confirm', 'aria-label': 'Confirm deletion' },
        h('p', {}, `Delete the tag “${tag.tagName}”? Every association of the tag is removed with it.`),
        formErrors,
        h('div', { class: 'actions' }, yes, h('button', { type: 'button', onclick: () => replace(editor) }, 'Keep it')),
      ),
    );
    yes.focus();
  }

  async function entities(tag: Tag): Promise<void> {
    try {
      const { body } = await request<EntityPage>(
        identity.token,
        'GET',
        `/tags/${encodeURIComponent(tag.tagId)}/entities?limit=100`,
        { signal: context.signal },
      );
      replace(
        detail,
        h('h2', {}, `Entities tagged “${tag.tagName}” (${body.total})`),
        body.entities.length === 0
          ? h('p', {}, 'No entity carries this tag.')
          : h('ul', {}, ...body.entities.map((entity) => h('li', {}, `${entity.entityType} ${entity.entityId}`))),
      );
    } catch (error) {
      showFailure(context, errors, error);
    }
  }

  const controls = h(
    'form',
    {
      class: 'controls',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        offset = 0;
        void load();
      },
    },
    field('Search name or description', search),
    field('Sort', sort),
    h('button', { type: 'submit' }, 'Search'),
    mayCreateTags(identity) && h('button', { type: 'button', onclick: () => edit() }, 'New tag'),
  );
  sort.addEventListener('change', () => {
    offset = 0;
    void load();
  });
  replace(root, h('h1', {}, 'Tags'), controls, errors, editor, list, pager, detail);
  void load();
}
