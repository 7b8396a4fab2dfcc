/** The upstream portal's broad scopes (DESIGN 4.3). */
export const SCOPE_READ = 'portal.r';
export const SCOPE_WRITE = 'portal.w';
export const SCOPE_ADMIN = 'portal.admin';
