package dev.once.store.dynamodb;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import dev.once.store.RecordId;
import dev.once.tck.RequiredServices;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClientBuilder;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * DynamoDB Local, in this JVM and in memory, on a free loopback port: started once for the test run
 * and reached over HTTP by the real SDK client, so requests, conditions and errors travel the same
 * path as against AWS. Needs the sqlite4java native libraries that the build copies to {@code
 * target/native-libs} ({@code sqlite4java.library.path}).
 */
final class LocalDynamoDb {

  private static DynamoDBProxyServer server;
  private static DynamoDbClient client;
  private static DynamoDbAsyncClient asyncClient;
  private static Throwable startFailure;
  private static URI endpoint;

  private LocalDynamoDb() {}

  /**
   * The client, skipping (or failing, when services are required) if DynamoDB Local cannot start.
   */
  static synchronized DynamoDbClient client() {
    if (client == null && startFailure == null) {
      try {
        int port = freePort();
        server =
            ServerRunner.createServerFromCommandLineArgs(
                new String[] {"-inMemory", "-port", Integer.toString(port), "-disableTelemetry"});
        server.start();
        endpoint = URI.create("http://127.0.0.1:" + port);
        client = clientBuilder().build();
        Runtime.getRuntime()
            .addShutdownHook(new Thread(LocalDynamoDb::stop, "once-test-dynamodb-local-stop"));
      } catch (Exception | LinkageError e) {
        startFailure = e;
        e.printStackTrace();
      }
    }
    RequiredServices.assume(client != null, "DynamoDB Local (" + startFailure + ")");
    return client;
  }

  /** An async client of DynamoDB Local (the SDK's Netty client), shared by the test run. */
  static synchronized DynamoDbAsyncClient asyncClient() {
    client();
    if (asyncClient == null) {
      asyncClient = asyncClientBuilder(endpoint).build();
    }
    return asyncClient;
  }

  /** The port DynamoDB Local listens on, on loopback. */
  /**
   * Gives the record at {@code id} in {@code table} a state this version does not know, as a later
   * version sharing the table might add; the contract kit's {@code makeForeign}.
   */
  static boolean makeForeign(String table, RecordId id) {
    client()
        .updateItem(
            b ->
                b.tableName(table)
                    .key(Items.key(id))
                    .updateExpression("SET #state = :archived")
                    .expressionAttributeNames(Map.of("#state", Items.STATE))
                    .expressionAttributeValues(
                        Map.of(":archived", AttributeValue.fromS("ARCHIVED"))));
    return true;
  }

  static int port() {
    client();
    return endpoint.getPort();
  }

  /** A builder for an async client of a DynamoDB at {@code endpoint}, with dummy credentials. */
  static DynamoDbAsyncClientBuilder asyncClientBuilder(URI endpoint) {
    return local(DynamoDbAsyncClient.builder(), endpoint);
  }

  /** A builder for an async client of the same DynamoDB Local, e.g. with an interceptor. */
  static DynamoDbAsyncClientBuilder asyncClientBuilder() {
    client();
    return asyncClientBuilder(endpoint);
  }

  /** A builder for another client of the same DynamoDB Local, e.g. with an interceptor. */
  static DynamoDbClientBuilder clientBuilder() {
    return clientBuilder(endpoint == null ? URI.create("http://127.0.0.1:1") : endpoint);
  }

  /** A builder for a client of a DynamoDB at {@code endpoint}, with dummy credentials. */
  static DynamoDbClientBuilder clientBuilder(URI endpoint) {
    return local(DynamoDbClient.builder(), endpoint);
  }

  private static <B extends AwsClientBuilder<B, ?>> B local(B builder, URI endpoint) {
    return builder
        .endpointOverride(endpoint)
        .region(Region.US_EAST_1)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")));
  }

  /** Creates a table of its own for a test class. */
  static String newTable() {
    String table = "once_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    DynamoDbStore.createTable(client(), table);
    return table;
  }

  private static synchronized void stop() {
    try {
      if (client != null) {
        client.close();
      }
      if (asyncClient != null) {
        asyncClient.close();
      }
      if (server != null) {
        server.stop();
      }
    } catch (Exception e) {
      // The JVM is exiting.
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return socket.getLocalPort();
    }
  }
}
