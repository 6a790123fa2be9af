// sdk.temporal: the same TemporalApi as `vigil temporal` (src/triggers), with
// its errors turned into VigilErrors: an unknown name is NOT_FOUND, a firing
// over 600000 ms is TIMEOUT (its target killed), a failed firing is
// SEQUENCE_FAILED carrying the run id.
import { RecipeInputError } from '../../recipes/errors.ts';
import { TemporalApi, TemporalTimeoutError } from '../../triggers/temporal-api.ts';
import type { SdkContext } from '../../workspace/context.ts';
import { invalid, VigilError } from '../../errors/vigil-error.ts';

function translate(error: unknown): never {
  if (error instanceof TemporalTimeoutError) throw new VigilError('TIMEOUT', error.message);
  if (error instanceof RecipeInputError) throw new VigilError(/^no temporal recipe/.test(error.message) ? 'NOT_FOUND' : 'INVALID_ARGUMENT', error.message);
  throw error;
}

export function temporalNamespace(ctx: SdkContext) {
  const api = () => new TemporalApi({ cwd: ctx.workspace, env: ctx.env });
  const named = (name: unknown): string => {
    if (typeof name !== 'string' || name.length === 0) throw invalid('name', 'must be a temporal recipe name');
    return name;
  };
  const guard = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      translate(error);
    }
  };
  return {
    list: () => guard(() => api().list()),
    status: (name: string) => guard(() => api().status(named(name))),
    enable: (name: string): void => guard(() => api().enable(named(name))),
    disable: (name: string): void => guard(() => api().disable(named(name))),
    async fire(name: string): Promise<string> {
      const result = await api()
        .fire(named(name), { log: (line) => process.stderr.write(`${line}\n`) })
        .catch(translate);
      if (result.status !== 'succeeded') {
        throw new VigilError('SEQUENCE_FAILED', `temporal.fire("${name}"): run ${result.runId} ${result.status}${result.reason ? `: ${result.reason}` : ''}`, {
          run_id: result.runId,
          status: result.status,
        });
      }
      return result.output;
    },
  };
}
