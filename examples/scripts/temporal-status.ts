// sdk.temporal: the schedules of this project and their circuit breakers.
// cd examples && vigil script run scripts/temporal-status.ts
const entries = sdk.temporal.list();
const broken = entries.filter((e) => e.circuit_broken).map((e) => e.name);
// sdk.temporal.fire(name) runs one now and returns its output; enable/disable switch one.
return { schedules: entries.map((e) => ({ name: e.name, next: e.next_run ?? null, failures: e.consecutive_failures })), broken };
