/*
 * smlua_main.c: the command line of the stealmark-lua interpreters.
 *
 *   stealmark-lua [options] [script [args]]
 *     -e chunk   run the string 'chunk'
 *     -l mod     require 'mod' into the global 'mod' (-l g=mod: into 'g')
 *     -v         print the version
 *     -E         ignore LUA_INIT_5_4 and LUA_INIT
 *     -W         turn warnings on
 *     --         stop handling options
 *     -          run standard input
 * Without a script, -e or -v, the standard input is run (there is no
 * interactive mode). The table 'arg' holds the script at 0, its arguments
 * at 1.., and the interpreter and the options before it at negative
 * indices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

/* The program name used in error messages. */
static const char *smlua_progname = "stealmark-lua";

static void smlua_usage(const char *badoption) {
  fprintf(stderr, "%s: unrecognized option '%s'\n", smlua_progname,
          badoption);
  fprintf(stderr,
          "usage: %s [options] [script [args]]\n"
          "  -e chunk  run the string 'chunk'\n"
          "  -l mod    require library 'mod' into global 'mod'\n"
          "  -l g=mod  require library 'mod' into global 'g'\n"
          "  -v        show version information\n"
          "  -E        ignore environment variables\n"
          "  -W        turn warnings on\n"
          "  --        stop handling options\n"
          "  -         stop handling options and run stdin\n",
          smlua_progname);
}

/* Prints the error message on top of the stack (if any) and pops it. */
static int smlua_report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    if (msg == NULL)
      msg = "(error object is not a string)";
    fprintf(stderr, "%s: %s\n", smlua_progname, msg);
    fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

/* The message handler: adds a traceback to string-convertible errors. */
static int smlua_msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Calls the function below 'nargs' arguments with the message handler. */
static int smlua_call(lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  int status;
  lua_pushcfunction(L, smlua_msghandler);
  lua_insert(L, base);
  status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  return status;
}

static int smlua_dochunk(lua_State *L, int status) {
  if (status == LUA_OK)
    status = smlua_call(L, 0, 0);
  return smlua_report(L, status);
}

static int smlua_dostring(lua_State *L, const char *s, const char *name) {
  return smlua_dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l name or -l global=name: global = require(name). */
static int smlua_require(lua_State *L, const char *spec) {
  const char *eq = strchr(spec, '=');
  const char *mod = eq ? eq + 1 : spec;
  int status;
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  status = smlua_call(L, 1, 1);
  if (status == LUA_OK) {
    if (eq)
      lua_pushlstring(L, spec, (size_t)(eq - spec));
    else
      lua_pushstring(L, spec);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return smlua_report(L, status);
}

/* Runs LUA_INIT_5_4 or else LUA_INIT: '@file' runs the file. */
static int smlua_init(lua_State *L) {
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=LUA_INIT";
    init = getenv(name + 1);
  }
  if (init == NULL)
    return LUA_OK;
  if (init[0] == '@')
    return smlua_dochunk(L, luaL_loadfile(L, init + 1));
  return smlua_dostring(L, init, name);
}

/* The options parsed from the command line. */
typedef struct smlua_options {
  int script;  /* index of the script in argv, or argc if none */
  int has_e, has_v, no_env;
} smlua_options;

/* Parses options; returns 0 and names the bad one in *bad on error. */
static int smlua_parse(int argc, char **argv, smlua_options *o,
                       const char **bad) {
  int i;
  memset(o, 0, sizeof(*o));
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || strcmp(a, "-") == 0)
      break; /* the script ('-' is stdin) */
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    switch (a[1]) {
      case 'E': case 'W': case 'v':
        if (a[2] != '\0') { *bad = a; return 0; }
        if (a[1] == 'E') o->no_env = 1;
        if (a[1] == 'v') o->has_v = 1;
        break;
      case 'e': case 'l':
        if (a[2] == '\0') {
          if (++i >= argc || argv[i][0] == '-') { *bad = a; return 0; }
        }
        if (a[1] == 'e') o->has_e = 1;
        break;
      default:
        *bad = a;
        return 0;
    }
  }
  o->script = i;
  return 1;
}

/* Sets the global 'arg': argv[script] at 0, the rest around it. */
static void smlua_argtable(lua_State *L, int argc, char **argv, int script) {
  int i;
  lua_createtable(L, argc - script - 1 > 0 ? argc - script - 1 : 0,
                  script + 1);
  for (i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Loads and runs the script argv[script] with its arguments. */
static int smlua_script(lua_State *L, int argc, char **argv, int script) {
  const char *fname = argv[script];
  int status, i;
  if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
    fname = NULL; /* standard input */
  status = luaL_loadfile(L, fname);
  if (status == LUA_OK) {
    for (i = script + 1; i < argc; i++)
      lua_pushstring(L, argv[i]);
    status = smlua_call(L, argc - script - 1, LUA_MULTRET);
  }
  return smlua_report(L, status);
}

/* Runs -e and -l options, in order, up to the script. */
static int smlua_run_options(lua_State *L, char **argv, int script) {
  int i;
  for (i = 1; i < script; i++) {
    const char *a = argv[i];
    if (a[1] == 'W') lua_warning(L, "@on", 0);
    if (a[1] != 'e' && a[1] != 'l') continue;
    {
      const char *value = a[2] != '\0' ? a + 2 : argv[++i];
      int status = a[1] == 'e' ? smlua_dostring(L, value, "=(command line)")
                               : smlua_require(L, value);
      if (status != LUA_OK) return 0;
    }
  }
  return 1;
}

/* The protected main: everything runs inside a pcall. */
static int smlua_pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  smlua_options o;
  const char *bad = NULL;
  if (!smlua_parse(argc, argv, &o, &bad)) {
    smlua_usage(bad);
    return 0;
  }
  luaL_checkversion(L);
  if (o.no_env) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (o.has_v)
    printf("%s\n", LUA_COPYRIGHT);
  smlua_argtable(L, argc, argv, o.script < argc ? o.script : 0);
  if (!o.no_env && smlua_init(L) != LUA_OK)
    return 0;
  if (!smlua_run_options(L, argv, o.script))
    return 0;
  if (o.script < argc) {
    if (smlua_script(L, argc, argv, o.script) != LUA_OK)
      return 0;
  }
  else if (!o.has_e && !o.has_v) {
    if (smlua_dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK)
      return 0;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* The entry point, called from the Rust binary's main (with C linkage
 * when Lua is compiled as C++, for ThreadSanitizer: see build/main.rs). */
#ifdef __cplusplus
extern "C" int smlua_main(int argc, char **argv);
#endif
int smlua_main(int argc, char **argv) {
  int status, ok;
  lua_State *L = luaL_newstate();
  if (argc > 0 && argv[0] != NULL && argv[0][0] != '\0')
    smlua_progname = argv[0];
  if (L == NULL) {
    fprintf(stderr, "%s: cannot create state: not enough memory\n",
            smlua_progname);
    return EXIT_FAILURE;
  }
  lua_gc(L, LUA_GCSTOP);
  lua_pushcfunction(L, smlua_pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  status = lua_pcall(L, 2, 1, 0);
  ok = lua_toboolean(L, -1);
  smlua_report(L, status);
  lua_close(L);
  return (ok && status == LUA_OK) ? EXIT_SUCCESS : EXIT_FAILURE;
}
