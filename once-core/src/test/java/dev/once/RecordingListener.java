package dev.once;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps every event, for assertions. */
final class RecordingListener implements OnceListener {
  final List<OnceEvent> events = new CopyOnWriteArrayList<>();
  final List<String> storeCalls = new CopyOnWriteArrayList<>();

  @Override
  public void onEvent(OnceEvent event) {
    events.add(event);
  }

  @Override
  public void onStoreCall(String operation, long nanos) {
    storeCalls.add(operation);
  }
}
