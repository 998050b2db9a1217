package dev.once.spring;

import dev.once.OnceEvent;
import dev.once.OnceListener;
import dev.once.StoreCall;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands every event to each listener bean in order; the engine already isolates listener failures.
 */
final class CompositeListener implements OnceListener {

  private static final Logger log = LoggerFactory.getLogger(CompositeListener.class);

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
  public StoreCall storeCall(String operation) {
    // Every store call opens one here: one array, and StoreCall.all keeps the list it is given.
    StoreCall[] each = new StoreCall[listeners.size()];
    int opened = 0;
    for (OnceListener l : listeners) {
      try {
        each[opened] = l.storeCall(operation);
        opened++;
      } catch (RuntimeException e) {
        // Caught here, not only by the engine: the observations the others opened must still be
        // sent and ended, or their scopes would stay open on this thread.
        log.warn("a listener failed to open the observation of a store call ({})", operation, e);
      }
    }
    return StoreCall.all(List.of(opened == each.length ? each : Arrays.copyOf(each, opened)));
  }
}
