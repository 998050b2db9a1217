package dev.once.store.redis;

import dev.once.store.LeaseToken;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToIntFunction;

/**
 * A batched heartbeat cut into scripts. In a Cluster one script may only touch keys of one hash
 * slot, so leases are grouped by the slot of their record key (a standalone Redis has no slots: one
 * group). A group is cut again at {@link #MAX_KEYS_PER_SCRIPT} keys, because Redis runs one script
 * at a time: a script over ten thousand keys would hold every other client of the node for tens of
 * milliseconds, one over a few hundred for about a millisecond. The scripts are then sent together,
 * so the batch still costs about one round trip.
 */
final class LeaseGroups {

  static final int MAX_KEYS_PER_SCRIPT = 500;

  /** The leases one script extends, and their record keys, in the same order. */
  record Group(List<LeaseToken> leases, List<byte[]> keys) {

    byte[][] keyArray() {
      return keys.toArray(byte[][]::new);
    }

    /** {@code heartbeat_many}'s arguments: the lease, the retention, then each lease's token. */
    byte[][] args(byte[] lease, byte[] retention) {
      byte[][] args = new byte[2 + leases.size()][];
      args[0] = lease;
      args[1] = retention;
      for (int i = 0; i < leases.size(); i++) {
        args[2 + i] = Micros.ascii(leases.get(i).token());
      }
      return args;
    }

    /**
     * Adds to {@code extended} the leases the script's reply (a 1 or 0 per key) says it extended.
     */
    void addExtended(List<Object> reply, Set<LeaseToken> extended) {
      for (int i = 0; i < leases.size(); i++) {
        if (Long.valueOf(1L).equals(reply.get(i))) {
          extended.add(leases.get(i));
        }
      }
    }
  }

  private LeaseGroups() {}

  static List<Group> of(
      Collection<LeaseToken> leases, KeyLayout layout, ToIntFunction<byte[]> slotOf) {
    Map<Integer, Group> filling = new LinkedHashMap<>();
    List<Group> groups = new ArrayList<>();
    for (LeaseToken lease : leases) {
      byte[] key = layout.recordKey(lease.id());
      int slot = slotOf.applyAsInt(key);
      Group group =
          filling.computeIfAbsent(slot, s -> new Group(new ArrayList<>(), new ArrayList<>()));
      group.leases().add(lease);
      group.keys().add(key);
      if (group.keys().size() == MAX_KEYS_PER_SCRIPT) {
        groups.add(filling.remove(slot));
      }
    }
    groups.addAll(filling.values());
    return groups;
  }
}
