// The shapes every scenario shares with the command that runs it: the hooks
// it reports through while it runs, and what it hands back at the end.
import type { KeyFigure } from './compare.ts';
import type { ReportSection } from './report.ts';

export interface RunHooks {
  /** A progress line, about four times a second. */
  progress?: (line: string) => void;
  /** Setup steps, as they happen. */
  step?: (line: string) => void;
  /** Aborts the run (Ctrl-C): the clients stop and the figures are of what ran. */
  signal?: AbortSignal;
  /** Right before the clients are released, and right after the run ends (before they finish): a caller measuring the server between them sees the load alone. */
  started?: () => void;
  stopped?: () => void;
}

export interface ScenarioOutcome {
  /** JSON-able figures (--json). */
  figures: { scenario: string; interrupted: boolean };
  /** The summary a person reads. */
  text: string;
  /** The headline figures --compare divides. */
  key: KeyFigure[];
  /** Broken promises found (duplicates, late ends accepted, lost or duplicated events). */
  violations: number;
  /** The server lost the run's monitor or subscriptions mid-run (lost-state.ts). */
  lostState?: string;
  /** The report's section for this run. */
  section: (title: string) => ReportSection;
}
