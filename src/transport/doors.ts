// The doors beside plain HTTP that the server mounts (SSE, JSON-RPC). Each
// lives in its own module; this only wires them in.
import type { MonitorService } from '../service/service.ts';
import type { DoorExtensions } from './http-door.ts';
import { createRpcDoor } from './rpc-door.ts';
import { createSseDoor } from './sse-door.ts';

export function serverDoors(service: MonitorService): DoorExtensions {
  return { rpc: createRpcDoor(service), stream: createSseDoor(service) };
}
