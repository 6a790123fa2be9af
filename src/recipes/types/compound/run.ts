// compound: layers form a DAG (a layer without depends_on waits for the one
// before it) run on the same step executor as steps, so independent layers
// run at once. Every step of every layer gets VIGIL_CIR_SCOPE=run:<id>; a
// finished layer's output is captured into that scope as a `layer.output`
// signal (source `layer:<name>`) and given to later layers as
// LAYER_<NAME>_OUTPUT (the path of its output file). Output: the last layer's.
import { executePlan, type FinalStatus } from '../../executor/step-executor.ts';
import type { PlannedStep } from '../../planning/plan.ts';
import { topologicalOrder } from '../../planning/plan.ts';
import { stoppedWhy } from '../../tree/run-abort.ts';
import { type CompositeContext, type CompositeOutcome, notOfType } from '../composite.ts';

export function layerVarName(layer: string): string {
  return `LAYER_${layer.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_OUTPUT`;
}

export function layerPlan(layers: Array<{ name: string; depends_on?: string[] }>): { order: PlannedStep[]; cycle: string[] | null } {
  const planned: PlannedStep[] = layers.map((l, i) => ({
    label: l.name,
    step: { label: l.name, args: [], concurrencySafe: true },
    needs: l.depends_on ?? (i > 0 ? [layers[i - 1]!.name] : []),
    exclusiveGroup: null,
  }));
  return topologicalOrder(planned);
}

async function captureLayerOutput(ctx: CompositeContext, scope: string, layer: string, output: string): Promise<void> {
  if (output.trim() === '') return;
  try {
    const { openCir } = await import('../../../cir/index.ts');
    openCir(ctx.projectRoot).capture({ body: output, type: 'layer.output', source: `layer:${layer}`, scope });
  } catch (error) {
    ctx.say(`layer ${layer}: could not capture its output into CIR scope ${scope}: ${(error as Error).message}`);
  }
}

export async function runCompound(ctx: CompositeContext): Promise<CompositeOutcome> {
  const recipe = ctx.found.recipe;
  if (recipe.type !== 'compound') return notOfType(ctx, 'compound');
  const layers = recipe.layers ?? [];
  const scope = `run:${ctx.runId}`;
  const { order } = layerPlan(layers);
  const outputs = new Map<string, { file: string; text: string }>();
  const result = await executePlan(
    { type: 'compound', steps: order },
    {
      runStep: async (planned): Promise<FinalStatus> => {
        const layer = layers.find((l) => l.name === planned.label)!;
        const earlier: Record<string, string> = {};
        for (const [name, out] of outputs) earlier[layerVarName(name)] = out.file;
        const r = await ctx.runChild({
          role: `layer ${layer.name}`,
          name: layer.sequence,
          vars: { ...earlier, ...(layer.vars ?? {}) },
          env: { VIGIL_CIR_SCOPE: scope },
        });
        if (r.status !== 'succeeded') return r.status === 'cancelled' ? 'cancelled' : 'failed';
        outputs.set(layer.name, { file: r.outputFile, text: r.output });
        await captureLayerOutput(ctx, scope, layer.name, r.output);
        return 'succeeded';
      },
      notRun: (planned, status, reason) => {
        const layer = layers.find((l) => l.name === planned.label)!;
        ctx.skipChild(`layer ${layer.name}`, layer.sequence, reason, status);
      },
    },
    ctx.signal,
  );
  const last = layers.at(-1);
  const lastOutput = last ? outputs.get(last.name) : undefined;
  const output = lastOutput?.text ?? '';
  const whole = lastOutput?.file ? { outputFile: lastOutput.file } : {};
  if (result.cancelled) return { status: 'cancelled', output, ...whole, reason: stoppedWhy(ctx.signal) };
  if (!result.ok) {
    const bad = [...result.statuses].filter(([, s]) => s !== 'succeeded').map(([l, s]) => `layer ${l} ${s}`);
    return { status: 'failed', output, ...whole, reason: bad.join(', ') };
  }
  return { status: 'succeeded', output, ...whole };
}
