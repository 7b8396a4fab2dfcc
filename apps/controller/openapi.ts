import { WS_PATH } from './registry/registry.gateway.js';

/** What the controller's `/docs` page is titled; the WebSocket protocol is beyond OpenAPI, so it is told here. */
export const CONTROLLER_OPENAPI = {
  title: 'Bindery controller',
  description: [
    "Runtime registry of one host (`CONTROLLER_HOST_ID`): the operators' instance list, health and metrics.",
    '',
    `**WebSocket** (not modelled by OpenAPI): \`ws://HOST:CONTROLLER_PORT${WS_PATH}\` on this same port, JSON-RPC 2.0`,
    'in text frames: `service/register`, `service/update_metadata` (a notification), `service/deregister`,',
    '`session/refresh`, `discovery/lookup`, `discovery/subscribe` and `discovery/unsubscribe`; the server sends',
    'the notifications `discovery/changed` and `config/changed`. Notifications are never answered.',
    'Authenticate with `Authorization: Bearer <token>` on the upgrade (or `params.jwt` on `service/register`);',
    "the token's `sid`, `host` and `env` claims must match the registration. Protocol reference:",
    '`docs/controller.md` in the repository.',
  ].join('\n'),
};
