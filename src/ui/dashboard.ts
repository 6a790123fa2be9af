// GET /ui (§19): the dashboard page, its script, and /ui/events, the live
// view as server-sent events. It is mounted behind the same browser rules
// as the API (origin and loopback Host), and /ui/events reads the bearer
// token like every API call: without one it shows public monitors only.
// Viewers of the same class share one view (shared-views.ts); viewers without
// a token are capped apart from those with one.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MonitorService } from '../service/service.ts';
import { bearerOf, type DoorExtensions, jsonResponse } from '../transport/http-door.ts';
import type { HttpRequest, HttpResponse, StreamSink } from '../transport/http-types.ts';
import { dashboardPage } from './page.ts';
import { SharedViews, type ViewerCaps } from './shared-views.ts';

export const uiPath = '/ui';
export const defaultViewerCaps: ViewerCaps = { anonymous: 1000, withToken: 64 };

const security = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export class Dashboard {
  private readonly script = readFileSync(fileURLToPath(new URL('./static/app.mjs', import.meta.url)), 'utf8');
  readonly views: SharedViews;

  constructor(
    private readonly service: MonitorService,
    caps: Partial<ViewerCaps> = {},
  ) {
    this.views = new SharedViews(service, { ...defaultViewerCaps, ...caps });
  }

  close(): void {
    this.views.close();
  }

  /** Answers /ui paths; undefined for every other path. */
  mount(request: HttpRequest): Promise<HttpResponse> | undefined {
    const path = request.path;
    if (path !== uiPath && !path.startsWith(`${uiPath}/`)) return undefined;
    return Promise.resolve(this.answer(request));
  }

  private answer(request: HttpRequest): HttpResponse {
    if (request.method !== 'GET') {
      return jsonResponse(404, { code: 'NOT_FOUND', error: `${request.path} answers GET only.` });
    }
    switch (request.path) {
      case uiPath:
      case `${uiPath}/`:
        return { kind: 'full', status: 200, headers: { 'content-type': 'text/html; charset=utf-8', ...security }, body: dashboardPage() };
      case `${uiPath}/app.js`:
        return { kind: 'full', status: 200, headers: { 'content-type': 'text/javascript; charset=utf-8', ...security }, body: this.script };
      case `${uiPath}/events`:
        return this.events(request);
      default:
        return jsonResponse(404, { code: 'NOT_FOUND', error: `No page ${request.path}; the dashboard is at ${uiPath}.` });
    }
  }

  private events(request: HttpRequest): HttpResponse {
    const caller = { bearer: bearerOf(request) };
    const refused = this.views.refusal(caller);
    if (refused) {
      const who = refused.kind === 'anonymous' ? 'without a token (raise with serve --max-anonymous-viewers)' : 'with a token';
      return jsonResponse(429, { code: 'OVER_BUDGET', error: `At most ${refused.limit} dashboards ${who} may be open at once; try again later.` });
    }
    return {
      kind: 'stream',
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
      start: (sink: StreamSink) => {
        if (this.service.isClosed) sink.end();
        else this.views.join(caller, sink);
      },
    };
  }
}

/** Adds the dashboard to the doors' extensions, ahead of any other mount (the cloud's /v1). */
export function withDashboard(dashboard: Dashboard, extensions: DoorExtensions): DoorExtensions {
  const other = extensions.mount;
  return { ...extensions, mount: (request) => dashboard.mount(request) ?? other?.(request) };
}
