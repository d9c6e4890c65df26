/** Console test helpers: sign in over HTTP as a browser would (cookies by hand), and read a page's CSRF token. */
import type Koa from 'koa';
import request from 'supertest';

export const csrfIn = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const cookie = (res: request.Response, name: string): string | undefined => {
  const all = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  return all.map((c) => /^([^=]+)=([^;]*)/.exec(c)).find((m) => m?.[1] === name)?.[2];
};

export interface ConsoleClient {
  cookie: string;
  setCookie: string;
  get(path: string): Promise<request.Response>;
  /** a form POST with the session's CSRF token (read from `from`, a page of the session) unless `csrf` is given */
  post(
    path: string,
    form: Record<string, string>,
    opts?: { csrf?: string | null; from?: string },
  ): Promise<request.Response>;
}

export async function signIn(app: Koa, apiKey: string): Promise<ConsoleClient> {
  const page = await request(app.callback()).get('/console/sign-in');
  const pre = cookie(page, 'talat_console_pre')!;
  const res = await request(app.callback())
    .post('/console/sign-in')
    .set('Cookie', `talat_console_pre=${pre}`)
    .type('form')
    .send({ apiKey, csrf: csrfIn(page.text) });
  if (res.status !== 303) throw new Error(`sign-in: ${res.status} ${res.text.slice(0, 300)}`);
  const token = cookie(res, 'talat_console')!;
  const jar = `talat_console=${token}`;
  const setCookie = ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith('talat_console='))!;
  const client: ConsoleClient = {
    cookie: jar,
    setCookie,
    get: (path) => request(app.callback()).get(path).set('Cookie', jar).set('Accept-Language', 'en'),
    async post(path, form, opts = {}) {
      const csrf =
        opts.csrf === undefined ? csrfIn((await client.get(opts.from ?? '/console/payments')).text) : opts.csrf;
      return request(app.callback())
        .post(path)
        .set('Cookie', jar)
        .set('Accept-Language', 'en')
        .type('form')
        .send(csrf === null ? form : { ...form, csrf });
    },
  };
  return client;
}
