import { append, errorBox, field, h, replace } from './dom.js';
import { configView } from './config-view.js';
import { eventsView } from './events-view.js';
import { instancesView } from './instances-view.js';
import { NO_HOST, type Capability } from './capabilities.js';
import { forgetToken, identityOf, may, storedToken, storeToken, type Identity } from './session.js';
import { tagsView } from './tags-view.js';
import type { ConnectionState, View } from './view.js';

interface Route {
  readonly path: string;
  readonly title: string;
  readonly view: View;
  /** The capability the view's routes need (DESIGN 16); a token without it is not offered the view. */
  readonly needs: Capability;
}

const ROUTES: readonly Route[] = [
  { path: '/tags', title: 'Tags', view: tagsView, needs: 'tags:read' },
  { path: '/config', title: 'Config', view: configView, needs: 'config:admin' },
  { path: '/instances', title: 'Instances', view: instancesView, needs: 'registry:read' },
  { path: '/events', title: 'Events', view: eventsView, needs: 'tags:read' },
];

const CONNECTION_TEXT: Readonly<Record<ConnectionState, string>> = {
  live: 'Live',
  reconnecting: 'Connection lost — reconnecting…',
  idle: '',
};

let leave: AbortController | undefined;
/** A token from a link that arrived while a session was active: shown as a question until answered (DESIGN 13). */
let offered: string | undefined;

/**
 * `#token=…` (from `npm start`, or any link): removed from the address bar and history at once, whatever
 * follows. Taken at once only when no session is active; otherwise it waits for the operator's answer, so a
 * link cannot switch the identity the operator acts as without them noticing.
 */
function takeTokenFromFragment(): void {
  const token = new URLSearchParams(location.hash.slice(1)).get('token')?.trim();
  if (token === undefined) return;
  history.replaceState(null, '', `${location.pathname}#/tags`);
  const current = storedToken();
  if (current === null || identityOf(current) === null) {
    if (token !== '') storeToken(token);
    offered = undefined;
  } else if (token !== current) {
    offered = token;
  }
}

/** The label an operator recognises an identity by: its subject, the host it acts for, and its scopes. */
function describe(identity: Identity): string {
  const scopes = [...identity.scopes].join(' ') || 'no scopes';
  const host =
    identity.host === null
      ? ''
      : identity.host === NO_HOST
        ? ', acting for no host (its host claim names none)'
        : `, acting for host ${identity.host}`;
  return `${identity.subject}${host} (${scopes})`;
}

/** Asks before a link's token replaces the active session, naming both subjects; keeping is the default. */
function askToSwitch(main: HTMLElement, current: Identity, token: string): void {
  const next = identityOf(token);
  const answer = (take: boolean): void => {
    offered = undefined;
    if (take) storeToken(token);
    render();
  };
  const keep = h('button', { type: 'button', onclick: () => answer(false) }, `Keep ${current.subject}`);
  document.title = 'Switch identity? · Bindery console';
  replace(
    main,
    h(
      'section',
      { class: 'confirm', 'aria-labelledby': 'switch-title' },
      h('h1', { id: 'switch-title' }, 'Switch identity?'),
      h('p', {}, `You are signed in as ${describe(current)}.`),
      next === null
        ? h('p', {}, 'The link you opened carried something that is not a token (three dot-separated parts).')
        : h('p', {}, `The link you opened carries a token for ${describe(next)}.`),
      h(
        'div',
        { class: 'actions' },
        keep,
        next === null
          ? null
          : h('button', { type: 'button', class: 'danger', onclick: () => answer(true) }, `Switch to ${next.subject}`),
      ),
    ),
  );
  keep.focus();
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
  const routes = ROUTES.filter((route) => may(identity, route.needs));
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
    h('span', {}, describe(identity)),
    h('button', { type: 'button', onclick: () => signOut() }, 'Sign out'),
  );
  if (offered !== undefined) {
    askToSwitch(main, identity, offered);
    return;
  }
  if (current === undefined) {
    const needed = [...new Set(ROUTES.map((route) => route.needs))];
    const list = `${needed.slice(0, -1).join(', ')} or ${needed.at(-1) ?? ''}`;
    replace(
      main,
      h('h1', {}, 'Nothing to show'),
      errorBox(`This token's scopes (${scopes}) allow no console view (the views need ${list}).`),
    );
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
  offered = undefined;
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
  // Moving to another view answers an open question with "keep".
  offered = undefined;
  takeTokenFromFragment();
  render();
});
render();
