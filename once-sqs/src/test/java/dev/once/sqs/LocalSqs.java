package dev.once.sqs;

import dev.once.tck.RequiredServices;
import java.net.URI;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** ElasticMQ, an SQS-compatible server, started once in this JVM on a loopback port. */
final class LocalSqs {

  private static SQSRestServer server;
  private static SqsClient client;
  private static URI endpoint;

  private LocalSqs() {}

  /** The client of the in-JVM server, started on first use. */
  static synchronized SqsClient client() {
    if (client == null) {
      Throwable failure = null;
      try {
        server = SQSRestServerBuilder.withInterface("127.0.0.1").withDynamicPort().start();
        endpoint =
            URI.create("http://127.0.0.1:" + server.waitUntilStarted().localAddress().getPort());
        client = client(endpoint);
        Runtime.getRuntime()
            .addShutdownHook(new Thread(LocalSqs::stop, "once-test-elasticmq-stop"));
      } catch (Exception | LinkageError e) {
        failure = e;
      }
      RequiredServices.assume(client != null, "ElasticMQ (" + failure + ")");
    }
    return client;
  }

  /** The endpoint of the in-JVM server, for a child JVM's client. */
  static synchronized URI endpoint() {
    client();
    return endpoint;
  }

  /** A client of the SQS at {@code endpoint}, with dummy credentials. */
  static SqsClient client(URI endpoint) {
    return SqsClient.builder()
        .endpointOverride(endpoint)
        .region(Region.US_EAST_1)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
        .build();
  }

  /** Creates a queue of its own; returns its URL. */
  static String newQueue(String prefix) {
    String name = prefix + "-" + UUID.randomUUID();
    return client().createQueue(r -> r.queueName(name)).queueUrl();
  }

  static long depth(String queueUrl) {
    var attributes =
        client()
            .getQueueAttributes(
                r ->
                    r.queueUrl(queueUrl)
                        .attributeNames(
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE))
            .attributes();
    return Long.parseLong(attributes.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES))
        + Long.parseLong(
            attributes.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
  }

  /** Waits up to a minute for the condition; false if it never held. */
  static boolean await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(20);
    }
    return condition.getAsBoolean();
  }

  private static synchronized void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.stopAndWait();
    }
  }
}
