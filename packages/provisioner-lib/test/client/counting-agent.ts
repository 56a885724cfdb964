import { Agent, type Dispatcher } from 'undici';

/** An undici `Agent` that counts the requests dispatched through it, to tell which agent a client sends on. */
export class CountingAgent extends Agent {
  dispatched = 0;
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.dispatched += 1;
    return super.dispatch(options, handler);
  }
}
