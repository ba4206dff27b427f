# The C++ example of a documentation page, tested from the page itself so
# that the two cannot drift. Every ```cpp block of the page, in order, is one
# program; the ```text output block is what it prints.
#
#   cmake -DMODE=extract -DDOC=page.md -DOUT=example.cpp -P doc_example.cmake
#     writes the program, each block preceded by a #line directive so that a
#     compiler error names the page and its line.
#   cmake -DMODE=run -DDOC=page.md -DEXE=example -DWORK=dir -P doc_example.cmake
#     runs the program twice with the checkpoint directory WORK/ckpt (the
#     second run resumes), and fails unless each run exits 0 and prints
#     exactly the page's output block.

cmake_minimum_required(VERSION 3.18)

file(READ "${DOC}" text)

# Sets `out` to the number of newlines in `s`.
function(count_lines s out)
  string(REGEX REPLACE "[^\n]" "" newlines "${s}")
  string(LENGTH "${newlines}" n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "extract")
  set(rest "${text}")
  set(line 1) # the line of the page where `rest` starts
  set(program "")
  set(blocks 0)
  while(TRUE)
    string(FIND "${rest}" "\n```cpp\n" at)
    if(at EQUAL -1)
      break()
    endif()
    math(EXPR start "${at} + 8")
    string(SUBSTRING "${rest}" 0 ${start} skipped)
    count_lines("${skipped}" n)
    math(EXPR line "${line} + ${n}")
    string(SUBSTRING "${rest}" ${start} -1 rest)
    string(FIND "${rest}" "\n```" end)
    if(end EQUAL -1)
      message(FATAL_ERROR "${DOC}:${line}: a ```cpp block is not closed")
    endif()
    string(SUBSTRING "${rest}" 0 ${end} code)
    string(APPEND program "#line ${line} \"${DOC}\"\n${code}\n")
    math(EXPR blocks "${blocks} + 1")
    math(EXPR cut "${end} + 1")
    string(SUBSTRING "${rest}" 0 ${cut} consumed)
    count_lines("${consumed}" n)
    math(EXPR line "${line} + ${n}")
    string(SUBSTRING "${rest}" ${cut} -1 rest)
  endwhile()
  if(blocks EQUAL 0)
    message(FATAL_ERROR "${DOC}: no ```cpp block")
  endif()
  file(WRITE "${OUT}" "// Generated from ${DOC} by doc_example.cmake.\n"
                      "${program}")
elseif(MODE STREQUAL "run")
  string(FIND "${text}" "\n```text output\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${DOC}: no ```text output block")
  endif()
  math(EXPR start "${at} + 16")
  string(SUBSTRING "${text}" ${start} -1 rest)
  string(FIND "${rest}" "\n```" end)
  math(EXPR end "${end} + 1") # keep the last line's newline
  string(SUBSTRING "${rest}" 0 ${end} expected)
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  foreach(run first second)
    execute_process(COMMAND "${EXE}" "${WORK}/ckpt"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                    TIMEOUT 100)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${run} run: exit ${rc}\nstderr:\n${err}")
    endif()
    if(NOT out STREQUAL expected)
      message(FATAL_ERROR "${run} run: the output differs from ${DOC}'s "
                          "```text output block.\nexpected:\n${expected}\n"
                          "got:\n${out}")
    endif()
    message(STATUS "${run} run: the output of ${DOC}:\n${out}")
  endforeach()
  file(REMOVE_RECURSE "${WORK}")
else()
  message(FATAL_ERROR "MODE must be extract or run")
endif()
