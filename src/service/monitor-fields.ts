// The base protocol's monitor fields that Vigil stores and serves but does
// not act on (§3): `cadence`, `rules` and `budget`. Their shapes are checked
// by the request schemas; what a schema cannot say is checked here: a
// schedule is a 5-field cron expression, a rule's `when` is a filter of the
// monitor, its `then` one of the base protocol's actions, and its `id` names
// one rule only.
import { Cron } from 'croner';
import { ProtocolError, invalid } from '../protocol/errors.ts';
import { parseFilter } from '../protocol/filter.ts';
import type { MonitorBudget, MonitorCadence, MonitorDefinition, MonitorRule } from '../store/records.ts';

/** A monitor that declares no cadence is event driven: every observation is delivered as it is written. */
export const defaultCadence: MonitorCadence = { event_driven: true };

/** The actions a rule's `then` may name, as the base protocol writes them. */
export const ruleActions = ['log', 'annotate', 'label', 'notify:human', 'escalate:<subscription>', 'run:<ref>'] as const;
const ruleAction = /^(log|annotate|label|escalate:.+|run:.+|notify:human)$/s;

/** A schedule is a 5-field cron expression in UTC, as the base protocol says (`0 * * * *`: every hour). */
export function checkCadence(cadence: MonitorCadence | undefined, field = 'cadence'): void {
  const schedule = cadence?.schedule;
  if (typeof schedule !== 'string') return;
  try {
    new Cron(schedule, { paused: true, mode: '5-part', timezone: 'UTC' }).stop();
  } catch (error) {
    throw invalid(`"${field}.schedule" must be a 5-field cron expression in UTC (minute hour day-of-month month day-of-week, e.g. "0 * * * *"); ${(error as Error).message.replace(/^CronPattern: /, '').replace(/\.$/, '')}.`, {
      field: `${field}.schedule`,
    });
  }
}

/** Checks each rule against the monitor's types; throws the protocol's error naming the rule's field. */
export function checkRules(rules: readonly MonitorRule[], knownTypes: () => readonly string[], field = 'rules'): void {
  const seen = new Map<string, number>();
  rules.forEach((rule, i) => {
    const at = `${field}.${i}`;
    const first = seen.get(rule.id);
    if (first !== undefined) {
      throw invalid(`"${at}.id" repeats the id "${rule.id}" of ${field}.${first}; each rule needs its own id.`, { field: `${at}.id` });
    }
    seen.set(rule.id, i);
    if (!ruleAction.test(rule.then)) {
      throw new ProtocolError(
        'UNKNOWN_VOCABULARY',
        `"${at}.then" must be one of ${ruleActions.join(', ')}; got ${JSON.stringify(rule.then)}.`,
        { invalid: [`${at}.then:${rule.then}`], known: { 'rules.then': ruleActions }, field: `${at}.then` },
      );
    }
    try {
      parseFilter(rule.when, { knownTypes });
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      throw new ProtocolError(error.code, `"${at}.when": ${error.message}`, { ...error.extra, field: `${at}.when` });
    }
  });
}

/** The three fields as a served monitor carries them, with the defaults for a monitor made before they existed. */
export function servedMonitorFields(d: MonitorDefinition): { cadence: MonitorCadence; rules: MonitorRule[]; budget: MonitorBudget | null } {
  return { cadence: d.cadence ?? defaultCadence, rules: d.rules ?? [], budget: d.budget ?? null };
}
