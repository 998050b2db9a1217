package dev.once.store.redis;

import dev.once.store.RecordId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * A batch (of heartbeats, claims, finishes) cut into scripts. In a Cluster one script may only
 * touch keys of one hash slot, so the items are grouped by the slot of their record key (a
 * standalone Redis has no slots: one group). A group is cut again at {@link #MAX_KEYS_PER_SCRIPT}
 * keys, because Redis runs one script at a time: a script over ten thousand keys would hold every
 * other client of the node for tens of milliseconds, one over a few hundred for about a
 * millisecond. The scripts are then sent together, so the batch still costs about one round trip.
 */
final class SlotGroups {

  static final int MAX_KEYS_PER_SCRIPT = 500;

  /**
   * The items one script takes, their record keys, and where each stands in the batch, all in the
   * same order.
   */
  record Group<T>(List<T> items, List<byte[]> keys, List<Integer> positions) {

    byte[][] keyArray() {
      return keys.toArray(byte[][]::new);
    }
  }

  private SlotGroups() {}

  static <T> List<Group<T>> of(
      List<T> items, Function<T, RecordId> id, KeyLayout layout, ToIntFunction<byte[]> slotOf) {
    Map<Integer, Group<T>> filling = new LinkedHashMap<>();
    List<Group<T>> groups = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      T item = items.get(i);
      byte[] key = layout.recordKey(id.apply(item));
      int slot = slotOf.applyAsInt(key);
      Group<T> group =
          filling.computeIfAbsent(
              slot, s -> new Group<>(new ArrayList<>(), new ArrayList<>(), new ArrayList<>()));
      group.items().add(item);
      group.keys().add(key);
      group.positions().add(i);
      if (group.keys().size() == MAX_KEYS_PER_SCRIPT) {
        groups.add(filling.remove(slot));
      }
    }
    groups.addAll(filling.values());
    return groups;
  }
}
