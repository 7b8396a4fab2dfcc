import { append, errorBox, field, h, replace } from './dom.js';
import { configView } from './config-view.js';
import { eventsView } from './events-view.js';
import { instancesView } from './instances-view.js';
import { canRead, forgetToken, identityOf, isAdmin, storedToken, storeToken, type Identity } from './session.js';
import { tagsView } from './tags-view.js';
import type { ConnectionState, View } from './view.js';

interface Route {
  readonly path: string;
  readonly title: string;
  readonly view: View;
  readonly allowed: (identity: Identity) => boolean;
}

const ROUTES: readonly Route[] = [
  { path: '/tags', title: 'Tags', view: tagsView, allowed: canRead },
  { path: '/config', title: 'Config', view: configView, allowed: isAdmin },
  { path: '/instances', title: 'Instances', view: instancesView, allowed: isAdmin },
  { path: '/events', title: 'Events', view: eventsView, allowed: canRead },
];

const CONNECTION_TEXT: Readonly<Record<ConnectionState, string>> = {
  live: 'Live',
  reconnecting: 'Connection lost — reconnecting…',
  idle: '',
};

let leave: AbortController | undefined;

/** `#token=…` from `npm start`: stored for this tab, then removed from the address bar and history. */
function takeTokenFromFragment(): void {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('token');
  if (token === null) return;
  storeToken(token);
  history.replaceState(null, '', `${location.pathname}#/tags`);
}

function render(notice?: string): void {
  leave?.abort();
  leave = new AbortController();
  const main = document.getElementById('main');
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  const connection = document.getElementById('connection');
  if (!main || !nav || !who || !connection) return;
  replace(connection);
  const token = storedToken();
  const identity = token === null ? null : identityOf(token);
  if (identity === null) {
    replace(nav);
    replace(who);
    signIn(main, notice ?? (token === null ? undefined : 'That is not a token (three dot-separated parts).'));
    return;
  }
  const routes = ROUTES.filter((route) => route.allowed(identity));
  const current = routes.find((route) => location.hash === `#${route.path}`) ?? routes[0];
  replace(
    nav,
    h(
      'ul',
      {},
      ...routes.map((route) =>
        h(
          'li',
          {},
          h('a', { href: `#${route.path}`, 'aria-current': route === current ? 'page' : undefined }, route.title),
        ),
      ),
    ),
  );
  const scopes = [...identity.scopes].join(' ') || 'no scopes';
  replace(
    who,
    h('span', {}, `${identity.subject}${identity.host === null ? '' : ` @ ${identity.host}`} (${scopes})`),
    h('button', { type: 'button', onclick: () => signOut() }, 'Sign out'),
  );
  if (current === undefined) {
    replace(main, h('h1', {}, 'Nothing to show'), errorBox(`This token's scopes (${scopes}) allow no console view.`));
    return;
  }
  document.title = `${current.title} · Bindery console`;
  replace(main);
  const signal = leave.signal;
  current.view(main, {
    identity,
    signal,
    setConnection(state) {
      if (!signal.aborted) replace(connection, CONNECTION_TEXT[state]);
      connection.className = state;
    },
    signOut(reason) {
      signOut(`The api refused the token: ${reason}`);
    },
  });
}

function signOut(notice?: string): void {
  forgetToken();
  history.replaceState(null, '', `${location.pathname}#/tags`);
  render(notice);
}

function signIn(main: HTMLElement, notice: string | undefined): void {
  const input = h('textarea', { name: 'token', rows: 4, required: true, autocomplete: 'off', spellcheck: 'false' });
  const form = h(
    'form',
    {
      class: 'sign-in',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (token === '') return;
        storeToken(token);
        render();
      },
    },
    field('Bearer token', input),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  replace(
    main,
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Paste an access token. It stays in this browser tab and is sent only to this api.'),
  );
  if (notice !== undefined) append(main, errorBox(notice));
  append(main, form);
}

takeTokenFromFragment();
window.addEventListener('hashchange', () => {
  takeTokenFromFragment();
  render();
});
render();
