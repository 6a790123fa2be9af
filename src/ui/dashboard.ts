// GET /ui (§19): the dashboard page, its script, and /ui/events, the live
// view as server-sent events. It is mounted behind the same browser rules
// as the API (origin and loopback Host), and /ui/events reads the bearer
// token like every API call: without one it shows public monitors only.
// Viewers of the same class share one view (shared-views.ts); viewers without
// a token are capped apart from those with one, one client and one token
// below those caps, and the admin has places of its own.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { MonitorService } from '../service/service.ts';
import { bearerOf, type DoorExtensions, jsonResponse } from '../transport/http-door.ts';
import type { HttpRequest, HttpResponse, StreamSink } from '../transport/http-types.ts';
import { chartParam } from './chart-view.ts';
import { LeaseHistory } from './lease-history.ts';
import { machineCharts } from './machine-charts.ts';
import { observationFilter } from './observation-filter.ts';
import { dashboardPage } from './page.ts';
import { ObservationRates } from './rates.ts';
import { RunBook } from './run-book.ts';
import { type Refusal, SharedViews, type ViewerCaps } from './shared-views.ts';
import { defaultViewerCaps } from './viewer-limits.ts';
import { TransitionLog } from './transition-log.ts';

export const uiPath = '/ui';
export { defaultViewerCaps } from './viewer-limits.ts';

const refusalText = (refused: Refusal): string => {
  switch (refused.kind) {
    case 'anonymous':
      return `At most ${refused.limit} dashboards without a token (raise with serve --max-anonymous-viewers) may be open at once; try again later.`;
    case 'token':
      return `At most ${refused.limit} dashboards with a token may be open at once; try again later.`;
    case 'admin':
      return `At most ${refused.limit} dashboards with the admin token may be open at once; try again later.`;
    case 'client':
      return `This client (${refused.who}) already has ${refused.limit} dashboards open, the most one client may have (serve --viewer-limits per_client); close one first.`;
    case 'per-token':
      return `This token already has ${refused.limit} dashboards open, the most one token may have (serve --viewer-limits per_token); close one first.`;
    case 'filtered-client':
      return `This client (${refused.who}) already has ${refused.limit} differently filtered or charted dashboards open, the most one client may have (serve --viewer-limits filtered_per_client); close one, or use a filter already open.`;
    case 'filtered-class':
      return `${refused.limit} differently filtered or charted dashboards are already open for viewers like this one, the most allowed (serve --viewer-limits filtered_per_class); use a filter already open, or none.`;
  }
};

const security = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The page's scripts (classic scripts, see page.ts), read once when first asked for. */
const scripts: Record<string, () => string> = {
  [`${uiPath}/app.js`]: () => readFileSync(fileURLToPath(new URL('./static/app.mjs', import.meta.url)), 'utf8'),
  [`${uiPath}/glance.js`]: () => readFileSync(fileURLToPath(new URL('./static/glance.mjs', import.meta.url)), 'utf8'),
  [`${uiPath}/timeline.js`]: () => readFileSync(fileURLToPath(new URL('./static/timeline.mjs', import.meta.url)), 'utf8'),
  [`${uiPath}/waterfall.js`]: () => readFileSync(fileURLToPath(new URL('./static/waterfall.mjs', import.meta.url)), 'utf8'),
  [`${uiPath}/filter.js`]: () => readFileSync(fileURLToPath(new URL('./static/filter.mjs', import.meta.url)), 'utf8'),
  [`${uiPath}/chart.js`]: () => readFileSync(fileURLToPath(new URL('./static/chart.mjs', import.meta.url)), 'utf8'),
  // elkjs lays the statecharts out in the page; its bundled build runs without a worker or a CDN.
  [`${uiPath}/elk.js`]: () => readFileSync(createRequire(import.meta.url).resolve('elkjs/lib/elk.bundled.js'), 'utf8'),
};

export class Dashboard {
  private readonly loaded = new Map<string, string>();
  readonly views: SharedViews;

  constructor(
    private readonly service: MonitorService,
    caps: Partial<ViewerCaps> = {},
  ) {
    // Rates for the sparklines, lease history for the timelines, runs for the waterfalls, transitions for the charts.
    const books = { rates: new ObservationRates(service), leases: new LeaseHistory(service), runs: new RunBook(service), transitions: new TransitionLog() };
    this.views = new SharedViews(service, { ...defaultViewerCaps, ...caps }, books);
  }

  private script(path: string): string {
    let text = this.loaded.get(path);
    if (text === undefined) {
      text = (scripts[path] as () => string)();
      this.loaded.set(path, text);
    }
    return text;
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
      case `${uiPath}/glance.js`:
      case `${uiPath}/timeline.js`:
      case `${uiPath}/waterfall.js`:
      case `${uiPath}/filter.js`:
      case `${uiPath}/chart.js`:
      case `${uiPath}/elk.js`:
        return { kind: 'full', status: 200, headers: { 'content-type': 'text/javascript; charset=utf-8', ...security }, body: this.script(request.path) };
      case `${uiPath}/machines`:
        return { kind: 'full', status: 200, headers: { 'content-type': 'application/json; charset=utf-8', ...security }, body: JSON.stringify({ machines: machineCharts() }) };
      case `${uiPath}/events`:
        return this.events(request);
      default:
        return jsonResponse(404, { code: 'NOT_FOUND', error: `No page ${request.path}; the dashboard is at ${uiPath}.` });
    }
  }

  private events(request: HttpRequest): HttpResponse {
    const caller = { bearer: bearerOf(request), address: request.remoteAddress };
    const chart = chartParam(request.query);
    if (typeof chart === 'string') return jsonResponse(400, { code: 'INVALID', error: chart });
    const filter = observationFilter(request.query);
    if (typeof filter === 'string') return jsonResponse(400, { code: 'INVALID', error: filter });
    const refused = this.views.refusal(caller, { chart, filter });
    if (refused) return jsonResponse(429, { code: 'OVER_BUDGET', error: refusalText(refused) });
    return {
      kind: 'stream',
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
      start: (sink: StreamSink) => {
        if (this.service.isClosed) sink.end();
        else this.views.join(caller, sink, { chart, filter });
      },
    };
  }
}

/** Adds the dashboard to the doors' extensions, ahead of any other mount (the cloud's /v1). */
export function withDashboard(dashboard: Dashboard, extensions: DoorExtensions): DoorExtensions {
  const other = extensions.mount;
  return { ...extensions, mount: (request) => dashboard.mount(request) ?? other?.(request) };
}
