package dev.once.bench.messaging;

import dev.once.messaging.ConsumerStats;
import dev.once.messaging.MessageProcessor;
import dev.once.messaging.MessageReader;
import java.util.List;
import java.util.function.Supplier;

/** One broker as the throughput harness drives it: fresh queues, bulk publishing, consumers. */
interface Broker<M> extends AutoCloseable {

  MessageReader<M> reader();

  /** Creates a queue of its own and returns its name or URL. */
  String newQueue() throws Exception;

  /** Publishes {@code count} messages with distinct keys {@code prefix-0 …}. */
  void publish(String queue, String prefix, int count) throws Exception;

  /**
   * Starts {@code consumers} consumers of {@code queue}; the supplier reads their combined stats.
   */
  Consumers consume(String queue, MessageProcessor<M> processor, int consumers) throws Exception;

  void deleteQueue(String queue) throws Exception;

  /** Running consumers. */
  interface Consumers extends AutoCloseable {
    Supplier<List<ConsumerStats>> stats();

    @Override
    void close();
  }
}
