package dev.once.spring;

import dev.once.OnceEvent;
import dev.once.OnceListener;
import java.util.List;

/**
 * Hands every event to each listener bean in order; the engine already isolates listener failures.
 */
final class CompositeListener implements OnceListener {

  private final List<OnceListener> listeners;

  private CompositeListener(List<OnceListener> listeners) {
    this.listeners = listeners;
  }

  static OnceListener of(List<OnceListener> listeners) {
    if (listeners.isEmpty()) {
      return OnceListener.NONE;
    }
    return listeners.size() == 1 ? listeners.get(0) : new CompositeListener(List.copyOf(listeners));
  }

  @Override
  public void onEvent(OnceEvent event) {
    for (OnceListener l : listeners) {
      l.onEvent(event);
    }
  }

  @Override
  public void onStoreCall(String operation, long nanos) {
    for (OnceListener l : listeners) {
      l.onStoreCall(operation, nanos);
    }
  }
}
