// sdk.plugin: the plugins of src/plugins as a script and `vigil plugin list` see them.
import { loadPlugins } from '../../plugins/plugins.ts';
import type { SdkContext } from '../../workspace/context.ts';

export interface PluginInfo {
  name: string;
  version?: string;
  hooks: string[];
  tools: string[];
}

export function pluginNamespace(ctx: SdkContext) {
  return {
    list: (): PluginInfo[] =>
      loadPlugins(ctx).plugins.map((p) => ({ name: p.name, ...(p.version ? { version: p.version } : {}), hooks: Object.keys(p.hooks), tools: Object.keys(p.tools) })),
  };
}
