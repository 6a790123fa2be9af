// How many dashboards may be open (shared-views.ts), with the names
// `vigil serve --viewer-limits name=value,...` gives them; kept apart so the
// CLI reads them without loading the dashboard.
import type { ViewerCaps } from './shared-views.ts';

export const defaultViewerCaps: ViewerCaps = {
  anonymous: 1000,
  withToken: 64,
  admin: 16,
  perClient: 32,
  perToken: 16,
  filteredPerClass: 32,
  filteredPerClient: 8,
};

/** The caps as `vigil serve --viewer-limits name=value,...` names them (--max-anonymous-viewers sets `anonymous`). */
export const viewerLimitNames = {
  with_token: 'withToken',
  admin: 'admin',
  per_client: 'perClient',
  per_token: 'perToken',
  filtered_per_class: 'filteredPerClass',
  filtered_per_client: 'filteredPerClient',
} as const satisfies Record<string, keyof ViewerCaps>;

export const defaultViewerLimits = Object.fromEntries(Object.entries(viewerLimitNames).map(([flag, cap]) => [flag, defaultViewerCaps[cap]])) as Record<
  keyof typeof viewerLimitNames,
  number
>;

/** The caps from the flag's pairs (`anonymous` comes from --max-anonymous-viewers). */
export function viewerCapsOf(limits: Partial<Record<keyof typeof viewerLimitNames, number>>): Partial<ViewerCaps> {
  const caps: Partial<Record<keyof ViewerCaps, number>> = {};
  for (const [flag, value] of Object.entries(limits)) caps[viewerLimitNames[flag as keyof typeof viewerLimitNames]] = value;
  return caps;
}
