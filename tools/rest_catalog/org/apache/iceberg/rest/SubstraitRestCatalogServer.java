/*
 * An Iceberg REST catalog server for the tests and the local stack: the REST protocol's routes over a JdbcCatalog,
 * each one handled by Iceberg's own server-side handlers (CatalogHandlers) and (de)serialised by Iceberg's own REST
 * object mapper, so the protocol's semantics are Iceberg's. Built the way Iceberg's test fixture (RESTCatalogAdapter
 * behind a servlet) is, but served by the JDK's HTTP server, with OAuth2 client credentials: the token endpoint
 * checks the client id and secret and every other route requires a bearer token it issued.
 *
 * In Iceberg's package for CatalogHandlers.commit and RESTObjectMapper (package-private). Compiled by
 * tools/rest_catalog.py; started by tests/rest_catalog_server.py.
 *
 * Warehouses: a client names one (the `warehouse` catalog property); v1/config answers with the prefix of its routes
 * (the warehouse's name). Each warehouse is a JdbcCatalog of its own, on the SQLite file ROOT/NAME/catalog.db, with
 * its data under ROOT/NAME/data; it is created on first use.
 *
 * Usage: java -cp ... org.apache.iceberg.rest.SubstraitRestCatalogServer ROOT
 * Environment: REST_CATALOG_CLIENT_ID, REST_CATALOG_CLIENT_SECRET (never on the command line: `ps` shows it).
 * Prints "listening PORT" on stdout once it accepts connections on 127.0.0.1 (a free port chosen by the system).
 */
package org.apache.iceberg.rest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.BaseTransaction;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.Transactions;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchIcebergTableException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.UnprocessableEntityException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.OAuthTokenResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;

public final class SubstraitRestCatalogServer {
  private static final int TOKEN_SECONDS = 3600;

  /** The routes of Iceberg's RESTCatalogAdapter (paths without "v1/" and the prefix). */
  private enum Route {
    LIST_NAMESPACES("GET", "namespaces"),
    CREATE_NAMESPACE("POST", "namespaces"),
    NAMESPACE_EXISTS("HEAD", "namespaces/{namespace}"),
    LOAD_NAMESPACE("GET", "namespaces/{namespace}"),
    DROP_NAMESPACE("DELETE", "namespaces/{namespace}"),
    UPDATE_NAMESPACE("POST", "namespaces/{namespace}/properties"),
    LIST_TABLES("GET", "namespaces/{namespace}/tables"),
    CREATE_TABLE("POST", "namespaces/{namespace}/tables"),
    TABLE_EXISTS("HEAD", "namespaces/{namespace}/tables/{table}"),
    LOAD_TABLE("GET", "namespaces/{namespace}/tables/{table}"),
    UPDATE_TABLE("POST", "namespaces/{namespace}/tables/{table}"),
    DROP_TABLE("DELETE", "namespaces/{namespace}/tables/{table}"),
    REGISTER_TABLE("POST", "namespaces/{namespace}/register"),
    REPORT_METRICS("POST", "namespaces/{namespace}/tables/{table}/metrics"),
    RENAME_TABLE("POST", "tables/rename"),
    COMMIT_TRANSACTION("POST", "transactions/commit"),
    LIST_VIEWS("GET", "namespaces/{namespace}/views"),
    CREATE_VIEW("POST", "namespaces/{namespace}/views"),
    VIEW_EXISTS("HEAD", "namespaces/{namespace}/views/{view}"),
    LOAD_VIEW("GET", "namespaces/{namespace}/views/{view}"),
    UPDATE_VIEW("POST", "namespaces/{namespace}/views/{view}"),
    DROP_VIEW("DELETE", "namespaces/{namespace}/views/{view}"),
    RENAME_VIEW("POST", "views/rename");

    final String method;
    final String[] parts;

    Route(String method, String pattern) {
      this.method = method;
      this.parts = pattern.split("/");
    }

    /** Path variables (still URL-encoded) when `segments` match, else null. */
    Map<String, String> match(String requestMethod, List<String> segments) {
      if (!method.equals(requestMethod) || segments.size() != parts.length) {
        return null;
      }
      Map<String, String> vars = new HashMap<>();
      for (int i = 0; i < parts.length; i++) {
        if (parts[i].startsWith("{")) {
          vars.put(parts[i].substring(1, parts[i].length() - 1), segments.get(i));
        } else if (!parts[i].equals(segments.get(i))) {
          return null;
        }
      }
      return vars;
    }

    Endpoint endpoint() {
      return Endpoint.create(method, "/v1/{prefix}/" + String.join("/", parts));
    }
  }

  private static final Map<Class<? extends Exception>, Integer> ERROR_CODES =
      Map.ofEntries(
          Map.entry(IllegalArgumentException.class, 400),
          Map.entry(ValidationException.class, 400),
          Map.entry(NamespaceNotEmptyException.class, 409),
          Map.entry(NotAuthorizedException.class, 401),
          Map.entry(ForbiddenException.class, 403),
          Map.entry(NoSuchNamespaceException.class, 404),
          Map.entry(NoSuchTableException.class, 404),
          Map.entry(NoSuchViewException.class, 404),
          Map.entry(NoSuchIcebergTableException.class, 404),
          Map.entry(UnsupportedOperationException.class, 406),
          Map.entry(AlreadyExistsException.class, 409),
          Map.entry(CommitFailedException.class, 409),
          Map.entry(UnprocessableEntityException.class, 422),
          Map.entry(CommitStateUnknownException.class, 500));

  private static final java.util.regex.Pattern WAREHOUSE_NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_]{1,64}");

  private final java.nio.file.Path root;
  private final Map<String, JdbcCatalog> warehouses = new HashMap<>();
  private final ObjectMapper mapper = RESTObjectMapper.mapper();
  private final byte[] clientId;
  private final byte[] clientSecret;
  private final Set<String> tokens = ConcurrentHashMap.newKeySet();
  private final SecureRandom random = new SecureRandom();

  private SubstraitRestCatalogServer(java.nio.file.Path root, String clientId, String clientSecret) {
    this.root = root;
    this.clientId = clientId.getBytes(StandardCharsets.UTF_8);
    this.clientSecret = clientSecret.getBytes(StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: SubstraitRestCatalogServer ROOT");
      System.exit(2);
    }
    String clientId = System.getenv("REST_CATALOG_CLIENT_ID");
    String clientSecret = System.getenv("REST_CATALOG_CLIENT_SECRET");
    if (clientId == null || clientSecret == null || clientId.isEmpty() || clientSecret.isEmpty()) {
      System.err.println("REST_CATALOG_CLIENT_ID and REST_CATALOG_CLIENT_SECRET must be set");
      System.exit(2);
    }
    SubstraitRestCatalogServer server =
        new SubstraitRestCatalogServer(java.nio.file.Paths.get(args[0]).toAbsolutePath(), clientId, clientSecret);
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    http.createContext("/", server::handle);
    http.setExecutor(Executors.newSingleThreadExecutor()); // one request at a time: one catalog connection
    http.start();
    System.out.println("listening " + http.getAddress().getPort());
    System.out.flush();
  }

  /** The warehouse's catalog, created on first use (null for a name that is not one). */
  private JdbcCatalog warehouse(String name) throws IOException {
    if (name == null || !WAREHOUSE_NAME.matcher(name).matches()) {
      return null;
    }
    JdbcCatalog catalog = warehouses.get(name);
    if (catalog == null) {
      java.nio.file.Path dir = java.nio.file.Files.createDirectories(root.resolve(name));
      catalog = new JdbcCatalog();
      try { // HadoopFileIO needs a Hadoop configuration (Spark's jars hold Hadoop's classes)
        catalog.setConf(Class.forName("org.apache.hadoop.conf.Configuration").getDeclaredConstructor().newInstance());
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("Hadoop's classes are not on the classpath", e);
      }
      Map<String, String> props = new HashMap<>();
      props.put("uri", "jdbc:sqlite:" + dir.resolve("catalog.db"));
      props.put("warehouse", dir.resolve("data").toUri().toString());
      props.put("jdbc.schema-version", "V1");
      props.put("clients", "1"); // one SQLite connection: a second one would wait on the first one's locks
      catalog.initialize(name, props);
      warehouses.put(name, catalog);
    }
    return catalog;
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      List<String> segments = new ArrayList<>(Arrays.asList(exchange.getRequestURI().getRawPath().split("/")));
      segments.removeIf(String::isEmpty);
      Map<String, String> query = parseForm(exchange.getRequestURI().getRawQuery());
      byte[] body = readAll(exchange.getRequestBody());
      if (segments.size() < 2 || !segments.get(0).equals("v1")) {
        sendError(exchange, 400, "BadRequestException", "No route for request: " + method + " " + segments);
        return;
      }
      List<String> rest = segments.subList(1, segments.size());
      if (method.equals("POST") && rest.equals(List.of("oauth", "tokens"))) {
        token(exchange, new String(body, StandardCharsets.UTF_8));
        return;
      }
      if (!authorized(exchange)) {
        sendError(exchange, 401, "NotAuthorizedException", "Not authorized: a bearer token from v1/oauth/tokens is required");
        return;
      }
      if (method.equals("GET") && rest.equals(List.of("config"))) {
        config(exchange, query.get("warehouse"));
        return;
      }
      JdbcCatalog catalog = rest.isEmpty() || !warehouses.containsKey(rest.get(0)) ? null : warehouse(rest.get(0));
      if (catalog == null) {
        sendError(exchange, 404, "NoSuchWarehouseException", "Unknown prefix: use the one v1/config returns");
        return;
      }
      rest = rest.subList(1, rest.size());
      for (Route route : Route.values()) {
        Map<String, String> vars = route.match(method, rest);
        if (vars != null) {
          vars.putAll(query);
          Object response;
          try {
            response = dispatch(catalog, route, vars, body);
          } catch (RuntimeException e) {
            int code = ERROR_CODES.getOrDefault(e.getClass(), 500);
            if (code == 500) {
              e.printStackTrace();
            }
            sendError(exchange, code, e.getClass().getSimpleName(), String.valueOf(e.getMessage()));
            return;
          }
          if (response == null) {
            exchange.sendResponseHeaders(204, -1);
          } else {
            sendJson(exchange, 200, mapper.writeValueAsBytes(response));
          }
          return;
        }
      }
      sendError(exchange, 400, "BadRequestException", "No route for request: " + method + " " + rest);
    } catch (IOException | RuntimeException e) {
      e.printStackTrace();
      throw e;
    }
  }

  private Object dispatch(JdbcCatalog catalog, Route route, Map<String, String> vars, byte[] body) {
    try {
      switch (route) {
        case LIST_NAMESPACES:
          Namespace parent = vars.containsKey("parent") ? RESTUtil.decodeNamespace(vars.get("parent")) : Namespace.empty();
          return vars.containsKey("pageSize")
              ? CatalogHandlers.listNamespaces(catalog, parent, vars.get("pageToken"), vars.get("pageSize"))
              : CatalogHandlers.listNamespaces(catalog, parent);
        case CREATE_NAMESPACE:
          return CatalogHandlers.createNamespace(catalog, read(body, CreateNamespaceRequest.class));
        case NAMESPACE_EXISTS:
          CatalogHandlers.namespaceExists(catalog, namespace(vars));
          return null;
        case LOAD_NAMESPACE:
          return CatalogHandlers.loadNamespace(catalog, namespace(vars));
        case DROP_NAMESPACE:
          CatalogHandlers.dropNamespace(catalog, namespace(vars));
          return null;
        case UPDATE_NAMESPACE:
          return CatalogHandlers.updateNamespaceProperties(
              catalog, namespace(vars), read(body, UpdateNamespacePropertiesRequest.class));
        case LIST_TABLES:
          return vars.containsKey("pageSize")
              ? CatalogHandlers.listTables(catalog, namespace(vars), vars.get("pageToken"), vars.get("pageSize"))
              : CatalogHandlers.listTables(catalog, namespace(vars));
        case CREATE_TABLE:
          CreateTableRequest create = read(body, CreateTableRequest.class);
          create.validate();
          return create.stageCreate()
              ? CatalogHandlers.stageTableCreate(catalog, namespace(vars), create)
              : CatalogHandlers.createTable(catalog, namespace(vars), create);
        case TABLE_EXISTS:
          CatalogHandlers.tableExists(catalog, ident(vars, "table"));
          return null;
        case LOAD_TABLE:
          return CatalogHandlers.loadTable(catalog, ident(vars, "table"));
        case UPDATE_TABLE:
          return CatalogHandlers.updateTable(catalog, ident(vars, "table"), read(body, UpdateTableRequest.class));
        case DROP_TABLE:
          if (Boolean.parseBoolean(vars.getOrDefault("purgeRequested", "false"))) {
            CatalogHandlers.purgeTable(catalog, ident(vars, "table"));
          } else {
            CatalogHandlers.dropTable(catalog, ident(vars, "table"));
          }
          return null;
        case REGISTER_TABLE:
          return CatalogHandlers.registerTable(catalog, namespace(vars), read(body, RegisterTableRequest.class));
        case REPORT_METRICS:
          return null; // accepted and dropped, as Iceberg's adapter does
        case RENAME_TABLE:
          CatalogHandlers.renameTable(catalog, read(body, RenameTableRequest.class));
          return null;
        case COMMIT_TRANSACTION:
          commitTransaction(catalog, read(body, CommitTransactionRequest.class));
          return null;
        case LIST_VIEWS:
          return vars.containsKey("pageSize")
              ? CatalogHandlers.listViews(catalog, namespace(vars), vars.get("pageToken"), vars.get("pageSize"))
              : CatalogHandlers.listViews(catalog, namespace(vars));
        case CREATE_VIEW:
          return CatalogHandlers.createView(catalog, namespace(vars), read(body, CreateViewRequest.class));
        case VIEW_EXISTS:
          CatalogHandlers.viewExists(catalog, ident(vars, "view"));
          return null;
        case LOAD_VIEW:
          return CatalogHandlers.loadView(catalog, ident(vars, "view"));
        case UPDATE_VIEW:
          return CatalogHandlers.updateView(catalog, ident(vars, "view"), read(body, UpdateTableRequest.class));
        case DROP_VIEW:
          CatalogHandlers.dropView(catalog, ident(vars, "view"));
          return null;
        case RENAME_VIEW:
          CatalogHandlers.renameView(catalog, read(body, RenameTableRequest.class));
          return null;
        default:
          throw new UnsupportedOperationException("route " + route);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("malformed request body: " + e.getMessage(), e);
    }
  }

  /** As Iceberg's adapter: every change validated on an in-memory transaction first, then all committed. */
  private static void commitTransaction(JdbcCatalog catalog, CommitTransactionRequest request) {
    List<Transaction> transactions = new ArrayList<>();
    for (UpdateTableRequest change : request.tableChanges()) {
      Table table = catalog.loadTable(change.identifier());
      if (!(table instanceof BaseTable)) {
        throw new IllegalStateException("cannot commit to a table that is not a BaseTable");
      }
      Transaction tx = Transactions.newTransaction(change.identifier().toString(), ((BaseTable) table).operations());
      transactions.add(tx);
      CatalogHandlers.commit(((BaseTransaction.TransactionTable) tx.table()).operations(), change);
    }
    transactions.forEach(Transaction::commitTransaction);
  }

  private void config(HttpExchange exchange, String warehouse) throws IOException {
    if (warehouse(warehouse) == null) {
      sendError(exchange, 400, "BadRequestException", "Name a warehouse ([A-Za-z0-9_]+): the `warehouse` property");
      return;
    }
    List<Endpoint> endpoints = new ArrayList<>();
    for (Route route : Route.values()) {
      endpoints.add(route.endpoint());
    }
    ConfigResponse response =
        ConfigResponse.builder().withOverride("prefix", warehouse).withEndpoints(endpoints).build();
    sendJson(exchange, 200, mapper.writeValueAsBytes(response));
  }

  /** OAuth2 token endpoint: client_credentials (id and secret in the form or as HTTP Basic) and token exchange. */
  private void token(HttpExchange exchange, String form) throws IOException {
    Map<String, String> request = parseForm(form);
    String grant = request.getOrDefault("grant_type", "");
    boolean ok;
    if (grant.equals("client_credentials")) {
      String id = request.get("client_id");
      String secret = request.get("client_secret");
      String basic = exchange.getRequestHeaders().getFirst("Authorization");
      if ((id == null || secret == null) && basic != null && basic.startsWith("Basic ")) {
        String[] pair = new String(Base64.getDecoder().decode(basic.substring(6).trim()), StandardCharsets.UTF_8).split(":", 2);
        id = URLDecoder.decode(pair[0], StandardCharsets.UTF_8);
        secret = pair.length > 1 ? URLDecoder.decode(pair[1], StandardCharsets.UTF_8) : null;
      }
      ok = same(id, clientId) && same(secret, clientSecret);
    } else if (grant.equals("urn:ietf:params:oauth:grant-type:token-exchange")) {
      ok = tokens.contains(request.getOrDefault("subject_token", "")); // refreshing a token we issued
    } else {
      sendOAuthError(exchange, 400, "unsupported_grant_type", "Unsupported grant_type: " + grant);
      return;
    }
    if (!ok) {
      sendOAuthError(exchange, 401, "invalid_client", "Invalid client credentials");
      return;
    }
    byte[] bytes = new byte[32];
    random.nextBytes(bytes);
    String token = HexFormat.of().formatHex(bytes);
    tokens.add(token);
    OAuthTokenResponse response =
        OAuthTokenResponse.builder()
            .withToken(token)
            .withTokenType("bearer")
            .withIssuedTokenType("urn:ietf:params:oauth:token-type:access_token")
            .setExpirationInSeconds(TOKEN_SECONDS)
            .build();
    sendJson(exchange, 200, mapper.writeValueAsBytes(response));
  }

  private boolean authorized(HttpExchange exchange) {
    String header = exchange.getRequestHeaders().getFirst("Authorization");
    return header != null
        && header.regionMatches(true, 0, "Bearer ", 0, 7)
        && tokens.contains(header.substring(7).trim());
  }

  private static boolean same(String given, byte[] expected) {
    return given != null && MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8), expected);
  }

  private <T> T read(byte[] body, Class<T> type) throws IOException {
    return mapper.readValue(body, type);
  }

  private static Namespace namespace(Map<String, String> vars) {
    return RESTUtil.decodeNamespace(vars.get("namespace"));
  }

  private static TableIdentifier ident(Map<String, String> vars, String key) {
    return TableIdentifier.of(namespace(vars), RESTUtil.decodeString(vars.get(key)));
  }

  private static Map<String, String> parseForm(String text) {
    Map<String, String> out = new HashMap<>();
    if (text == null || text.isEmpty()) {
      return out;
    }
    for (String pair : text.split("&")) {
      String[] kv = pair.split("=", 2);
      out.put(
          URLDecoder.decode(kv[0], StandardCharsets.UTF_8),
          kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
    }
    return out;
  }

  private static byte[] readAll(InputStream in) throws IOException {
    return in.readAllBytes();
  }

  private void sendError(HttpExchange exchange, int code, String type, String message) throws IOException {
    ErrorResponse error = ErrorResponse.builder().responseCode(code).withType(type).withMessage(message).build();
    sendJson(exchange, code, mapper.writeValueAsBytes(error));
  }

  private void sendOAuthError(HttpExchange exchange, int code, String error, String description) throws IOException {
    Map<String, String> body = Map.of("error", error, "error_description", description);
    sendJson(exchange, code, mapper.writeValueAsBytes(body));
  }

  private static void sendJson(HttpExchange exchange, int code, byte[] json) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    if (exchange.getRequestMethod().equals("HEAD")) {
      exchange.sendResponseHeaders(code, -1);
      return;
    }
    exchange.sendResponseHeaders(code, json.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(json);
    }
  }
}
