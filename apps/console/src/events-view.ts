import { ApiError, ConnectionLost, query, request } from './api.js';
import { h, replace, table, time } from './dom.js';
import { EventNames, type ChangeEvent } from './event-names.js';
import { showFailure, type ViewContext } from './view.js';

interface EventPage {
  readonly events: readonly ChangeEvent[];
  readonly next: number;
}

/** Events kept on the page (newest first). */
const SHOWN = 100;
const CATCH_UP_PAGE = 1000;
const WAIT_SEC = 20;
const RETRY_MS = 2000;

/** Events: the change feed, newest first, following live with long-polls (DESIGN 12, 13). */
export function eventsView(root: HTMLElement, context: ViewContext): void {
  const errors = h('div', { class: 'errors' });
  const list = h('div', { class: 'list' });
  let shown: ChangeEvent[] = [];
  const names = new EventNames(context.identity.token, context.signal);
  replace(
    root,
    h('h1', {}, 'Events'),
    h('p', {}, 'Changes to tags, entities, their links and config layers, newest first, as they commit.'),
    errors,
    list,
  );

  const render = (): void => {
    const rows = shown.map((event) => [
      String(event.seq),
      time(event.at),
      h('code', { class: 'event-type' }, event.type),
      event.actor ?? '—',
      names.describe(event),
    ]);
    replace(
      list,
      shown.length === 0
        ? h('p', {}, 'No events yet.')
        : table(`The latest ${shown.length} events`, ['Seq', 'At', 'Type', 'Actor', 'Change'], rows),
    );
  };

  const add = (events: readonly ChangeEvent[]): void => {
    if (events.length === 0) return;
    names.learn(events);
    shown = [...[...events].reverse(), ...shown].slice(0, SHOWN);
    render();
    // Shown at once with the names known; once the api has named the other tag ids, shown again.
    void names.resolve(shown).then(() => {
      if (!context.signal.aborted) render();
    });
  };

  const read = (after: number | undefined, parameters: Record<string, number>): Promise<EventPage> =>
    request<EventPage>(context.identity.token, 'GET', `/events${query({ after, ...parameters })}`, {
      signal: context.signal,
    }).then((response) => response.body);

  async function follow(): Promise<void> {
    let after: number | undefined;
    let caughtUp = false;
    while (!context.signal.aborted) {
      try {
        if (!caughtUp) {
          // From the oldest kept event to now, a page at a time; only the newest SHOWN stay on the page.
          for (;;) {
            const page = await read(after, { limit: CATCH_UP_PAGE });
            add(page.events);
            after = page.next;
            if (page.events.length < CATCH_UP_PAGE) break;
          }
          caughtUp = true;
          render();
        }
        context.setConnection('live');
        replace(errors);
        const page = await read(after, { limit: 100, wait: WAIT_SEC });
        add(page.events);
        after = page.next;
      } catch (error) {
        if (context.signal.aborted) return;
        if (error instanceof ApiError && error.status === 410) {
          // Pruned past our position: start again from the oldest kept event.
          after = undefined;
          caughtUp = false;
          shown = [];
          continue;
        }
        if (!(error instanceof ConnectionLost) && !(error instanceof ApiError && error.status >= 500)) {
          showFailure(context, errors, error);
          context.setConnection('idle');
          return;
        }
        context.setConnection('reconnecting');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  void follow();
}
