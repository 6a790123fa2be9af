// Bundles a worker folder into one ES module with esbuild, for workerd.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { VigilError } from '../errors/vigil-error.ts';

export async function bundleWorker(dir: string, minify: boolean): Promise<string> {
  const entry = ['src/index.ts', 'src/index.js', 'index.ts', 'index.js'].map((p) => join(dir, p)).find((p) => existsSync(p));
  if (!entry) throw new VigilError('NOT_FOUND', `${dir} has no src/index.ts (or src/index.js) to deploy`);
  const { build } = await import('esbuild');
  try {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      minify,
      write: false,
      logLevel: 'silent',
    });
    return result.outputFiles[0]!.text;
  } catch (error) {
    const errors = (error as { errors?: Array<{ text: string; location?: { file: string; line: number } | null }> }).errors ?? [];
    const first = errors[0];
    const where = first?.location ? ` (${first.location.file}:${first.location.line})` : '';
    throw new VigilError('WORKER_FAILED', `cannot bundle ${entry}: ${first?.text ?? (error as Error).message}${where}`);
  }
}
