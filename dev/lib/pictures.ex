defmodule OpenAgentsPolicy.Pictures do
  @moduledoc """
  The library's decisions drawn as SVG, for the guides: the disclosure
  schedule as one grid per family, the seam matrix, and the delegation seam.

  Nothing here is drawn by hand. Every cell is an answer of the public modules
  (`OpenAgents.Transparency.WorkDisclosure.fields_at/2`, `tier_for/2` and
  `never/1`; `OpenAgents.Delegations.Target.seam/3` and `delegation_seam/1`),
  so a picture shows what the Rust core decides at the revision it was
  generated from. `mix openagents_policy.pictures` writes the files (the
  `docs` alias runs it before ExDoc), and the test suite regenerates them in
  memory and fails when a committed file differs.

  The words in a picture:

    * a **schedule grid** has one row per scheduled field and one column per
      tier, `dark` to `glass`. A filled cell is a tier that discloses the
      field; the fill is the colour of the field's first tier, so each row is
      a bar that starts where the field first shows. A field read from a
      column of another name says so on the right. The never-listed columns
      sit apart, under the grid: no tier discloses them.
    * the **seam matrix** has a column per target lifecycle and two rows per
      kind, for a caller with reach and one without. A green cell offers
      `start`; a grey one names the unavailable reason.
    * the **delegation seam** has a column per delegation lifecycle: `cancel`
      while the delegation is under way, nothing after.

  Each cell carries `data-` attributes naming the answer it draws, so a
  test can read a picture back without parsing geometry. There are no
  pictures of the viewer ladder or of links: those are rules about who is
  looking, which `OpenAgents.Transparency.Ladder` states in words.
  """

  alias OpenAgents.Delegations.Target
  alias OpenAgents.Transparency.{Ladder, WorkDisclosure}
  alias OpenAgentsPolicy.Native

  # Geometry, in pixels, for a 13 px monospace font.
  @char 8.0
  @pad 16
  @row 24
  @title 40
  @gap 12

  @font "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
  @ink "#1f2933"
  @muted "#616e7c"
  @rule "#cbd2d9"
  @empty "#f5f7fa"
  # One fill per tier, lightest first: more light, more shown.
  @tier_fill %{dark: "#3e4c59", pulse: "#d2e6fa", ledger: "#7ab8eb", glass: "#2b6cb0"}
  @tier_ink %{dark: "#ffffff", pulse: @ink, ledger: @ink, glass: "#ffffff"}
  @offered "#c6f0c2"
  @withheld "#eceff3"

  @doc "Where the pictures are committed, relative to the project root."
  @spec dir() :: Path.t()
  def dir, do: "guides/assets"

  @doc """
  Every picture, as `{file name, SVG}`, in a stable order: one
  `schedule-<family>.svg` per family, then `seam-matrix.svg` and
  `delegation-seam.svg`.
  """
  @spec files() :: [{String.t(), String.t()}]
  def files do
    Enum.map(WorkDisclosure.families(), &{"schedule-#{&1}.svg", schedule_svg(&1)}) ++
      [{"seam-matrix.svg", seam_svg()}, {"delegation-seam.svg", delegation_seam_svg()}]
  end

  @doc """
  The schedule of `family` as an SVG grid: fields by tiers, with the
  never-listed columns apart.
  """
  @spec schedule_svg(WorkDisclosure.family()) :: String.t()
  def schedule_svg(family) do
    tiers = Ladder.tiers()
    admitted = Map.new(tiers, &{&1, MapSet.new(WorkDisclosure.fields_at(family, &1))})
    first = Map.new(WorkDisclosure.schedule() |> Map.fetch!(family))
    columns = Map.new(Native.field_columns(family), fn {f, c} -> {f, to_string(c)} end)

    fields =
      first
      |> Map.keys()
      |> Enum.sort_by(&{Ladder.rank(Map.fetch!(first, &1)), &1})

    label_w = width(Enum.map(fields, &to_string/1)) + @pad
    cell_w = width(Enum.map(tiers, &to_string/1)) + @pad
    grid_x = @pad + label_w

    notes =
      for field <- fields, columns[field] != to_string(field), into: %{} do
        {field, "read from #{columns[field]}"}
      end

    notes_w = if notes == %{}, do: 0, else: width(Map.values(notes)) + @pad
    w = grid_x + cell_w * length(tiers) + notes_w + @pad
    header_y = @title + 8

    header = headers(tiers, grid_x, cell_w, header_y + 14)

    rows =
      fields
      |> Enum.with_index()
      |> Enum.map(fn {field, r} ->
        y = header_y + @row + r * @row
        tier = Map.fetch!(first, field)

        cells =
          tiers
          |> Enum.with_index()
          |> Enum.map(fn {t, i} ->
            on? = MapSet.member?(admitted[t], field)
            fill = if on?, do: @tier_fill[tier], else: @empty

            box(grid_x + cell_w * i, y, cell_w, fill, ~s( data-tier="#{t}" data-shown="#{on?}"))
          end)

        mark =
          text(grid_x + cell_w * tier_index(tiers, tier) + cell_w / 2, y + 16, "from here",
            anchor: "middle",
            size: 10,
            fill: @tier_ink[tier]
          )

        note =
          if notes[field],
            do: text(grid_x + cell_w * length(tiers) + 10, y + 16, notes[field], fill: @muted),
            else: ""

        [
          ~s(<g data-field="#{field}" data-first-tier="#{tier}">),
          text(@pad, y + 16, field),
          cells,
          mark,
          note,
          "</g>"
        ]
      end)

    grid_bottom = header_y + @row + length(fields) * @row
    {never, never_h} = never_block(WorkDisclosure.never(family), grid_bottom + 12, w)

    svg(
      w,
      grid_bottom + 12 + never_h + @pad,
      "The #{family} disclosure schedule: which tier first shows each field",
      [
        text(@pad, 26, "#{family}: the tier that first shows each field", bold: true, size: 15),
        header,
        rows,
        never
      ]
    )
  end

  # The never-listed columns, flowed into as many columns as fit.
  defp never_block(never, top, w) do
    names = Enum.map(never, &to_string/1)
    col_w = width(names) + 32
    per_row = max(1, trunc((w - 2 * @pad) / col_w))
    lines = div(length(names) + per_row - 1, per_row)

    heading =
      text(@pad, top + 30, "never disclosed, at any tier (#{length(names)} columns)",
        bold: true,
        fill: @muted
      )

    pills =
      names
      |> Enum.with_index()
      |> Enum.map(fn {name, i} ->
        x = @pad + rem(i, per_row) * col_w
        y = top + 40 + div(i, per_row) * @row

        [
          ~s(<g data-never="#{name}">),
          ~s(<rect x="#{n(x)}" y="#{y + 2}" width="#{n(col_w - 8)}" height="#{@row - 4}" rx="10" ) <>
            ~s(fill="none" stroke="#{@rule}" stroke-dasharray="4 3"/>),
          text(x + 10, y + 16, name, fill: @muted),
          "</g>"
        ]
      end)

    rule =
      ~s(<line x1="#{@pad}" y1="#{top + 8}" x2="#{n(w - @pad)}" y2="#{top + 8}" stroke="#{@rule}"/>)

    {[rule, heading, pills], 40 + lines * @row}
  end

  @doc """
  The seam matrix as SVG: a row per target lifecycle and, for each kind, a
  column for a caller with reach and one without. A cell is what that caller
  may do to such a target, or why not.
  """
  @spec seam_svg() :: String.t()
  def seam_svg do
    lifecycles = Target.lifecycles()
    kinds = Target.kinds()
    reaches = [{true, "authorized"}, {false, "not authorized"}]
    columns = for kind <- kinds, reach <- reaches, do: {kind, reach}

    seams =
      for {kind, {r, _}} <- columns,
          lc <- lifecycles,
          into: %{},
          do: {{kind, r, lc}, Target.seam(kind, lc, r)}

    words = Enum.map(Map.values(seams), &(&1["unavailable_reason"] || "start"))

    cell_w = width(["not authorized" | words]) + @pad
    group_w = cell_w * length(reaches) + @gap
    grid_x = @pad + width(lifecycles) + @pad
    header_y = @title + 8
    top = header_y + 80

    x_of = fn col ->
      grid_x + div(col, length(reaches)) * group_w + rem(col, length(reaches)) * cell_w
    end

    kind_headers =
      kinds
      |> Enum.with_index()
      |> Enum.map(fn {kind, g} ->
        of_kind = for {{^kind, _, _}, seam} <- seams, do: seam
        mid = grid_x + g * group_w + cell_w * length(reaches) / 2

        [
          text(mid, header_y + 14, kind, anchor: "middle", bold: true),
          text(mid, header_y + 32, words_of(of_kind, "custody"),
            anchor: "middle",
            fill: @muted,
            size: 12
          ),
          text(mid, header_y + 48, "runtime class: " <> words_of(of_kind, "runtime_class"),
            anchor: "middle",
            fill: @muted,
            size: 12
          )
        ]
      end)

    reach_headers =
      columns
      |> Enum.with_index()
      |> Enum.map(fn {{_kind, {_r, label}}, col} ->
        text(x_of.(col) + cell_w / 2, header_y + 72, label, anchor: "middle", size: 12)
      end)

    rows =
      lifecycles
      |> Enum.with_index()
      |> Enum.map(fn {lc, r} ->
        y = top + r * @row

        cells =
          columns
          |> Enum.with_index()
          |> Enum.map(fn {{kind, {reach, _label}}, col} ->
            seam = seams[{kind, reach, lc}]
            caps = seam["capabilities"]
            word = if caps == [], do: seam["unavailable_reason"], else: Enum.join(caps, " ")

            [
              ~s(<g data-kind="#{kind}" data-lifecycle="#{lc}" data-authorized="#{reach}" ) <>
                ~s(data-capabilities="#{Enum.join(caps, " ")}" data-unavailable="#{seam["unavailable_reason"]}">),
              capability(x_of.(col), y, cell_w, caps, word),
              "</g>"
            ]
          end)

        [text(@pad, y + 16, lc, bold: true), cells]
      end)

    bottom = top + length(lifecycles) * @row

    legend =
      text(@pad, bottom + 20, "green: the capability offered; grey: the unavailable reason",
        fill: @muted,
        size: 12
      )

    svg(
      grid_x + group_w * length(kinds) - @gap + @pad,
      bottom + 20 + @pad,
      "The seam matrix: what a caller may do to a target, by lifecycle",
      [
        text(@pad, 26, "seam/3: what a caller may do to a target now", bold: true, size: 15),
        kind_headers,
        reach_headers,
        rows,
        legend
      ]
    )
  end

  # The distinct values of `key` across seams, `none` for nil: one word,
  # since custody and runtime class depend on the kind alone.
  defp words_of(seams, key),
    do: seams |> Enum.map(&(&1[key] || "none")) |> Enum.uniq() |> Enum.sort() |> Enum.join(" / ")

  @doc """
  The delegation seam as SVG: the capabilities of a delegation in each
  delegation lifecycle.
  """
  @spec delegation_seam_svg() :: String.t()
  def delegation_seam_svg do
    lifecycles = Target.delegation_lifecycles()
    cell_w = width(lifecycles) + 2 * @pad
    y = @title + 8 + @row

    cells =
      lifecycles
      |> Enum.with_index()
      |> Enum.map(fn {lc, i} ->
        caps = Target.delegation_seam(lc)["capabilities"]
        word = if caps == [], do: "nothing", else: Enum.join(caps, " ")

        [
          ~s(<g data-lifecycle="#{lc}" data-capabilities="#{Enum.join(caps, " ")}">),
          capability(@pad + cell_w * i, y, cell_w, caps, word),
          "</g>"
        ]
      end)

    svg(
      2 * @pad + cell_w * length(lifecycles),
      y + @row + @pad,
      "The delegation seam: what a caller may do to a delegation",
      [
        text(@pad, 26, "delegation_seam/1: what a caller may do to a delegation",
          bold: true,
          size: 15
        ),
        headers(lifecycles, @pad, cell_w, y - 10),
        cells
      ]
    )
  end

  # A row of bold column labels, centred over cells of width `cell_w` from `x`.
  defp headers(labels, x, cell_w, y) do
    labels
    |> Enum.with_index()
    |> Enum.map(fn {label, i} ->
      text(x + cell_w * i + cell_w / 2, y, label, anchor: "middle", bold: true)
    end)
  end

  # One cell of a grid row at (x, y).
  defp box(x, y, w, fill, attrs \\ "") do
    ~s(<rect#{attrs} x="#{n(x + 1)}" y="#{n(y + 1)}" width="#{n(w - 2)}" height="#{@row - 2}" ) <>
      ~s(rx="3" fill="#{fill}"/>)
  end

  # A seam cell: green and bold when something is offered, grey otherwise.
  defp capability(x, y, w, caps, word) do
    offered? = caps != []

    [
      box(x, y, w, if(offered?, do: @offered, else: @withheld)),
      text(x + w / 2, y + 16, word,
        anchor: "middle",
        size: 12,
        fill: if(offered?, do: @ink, else: @muted),
        bold: offered?
      )
    ]
  end

  defp tier_index(tiers, tier), do: Enum.find_index(tiers, &(&1 == tier))

  defp svg(w, h, title, body) do
    IO.iodata_to_binary([
      ~s(<svg xmlns="http://www.w3.org/2000/svg" width="#{n(w)}" height="#{n(h)}" ),
      ~s(viewBox="0 0 #{n(w)} #{n(h)}" role="img" aria-label="#{escape(title)}" ),
      ~s(font-family="#{@font}" font-size="13">\n),
      "<title>#{escape(title)}</title>\n",
      "<desc>Generated by mix openagents_policy.pictures from the openagents_policy core. Do not edit.</desc>\n",
      ~s(<rect width="100%" height="100%" rx="6" fill="#ffffff" stroke="#{@rule}"/>\n),
      body |> List.flatten() |> Enum.map(&[&1, "\n"]),
      "</svg>\n"
    ])
  end

  defp text(x, y, content, opts \\ []) do
    attrs = [
      ~s(x="#{n(x)}" y="#{n(y)}"),
      if(opts[:anchor], do: ~s( text-anchor="#{opts[:anchor]}"), else: ""),
      if(opts[:bold], do: ~s( font-weight="bold"), else: ""),
      if(opts[:size], do: ~s( font-size="#{opts[:size]}"), else: ""),
      ~s( fill="#{opts[:fill] || @ink}")
    ]

    ["<text ", attrs, ">", escape(to_string(content)), "</text>"]
  end

  defp width(words), do: Enum.max(Enum.map(words, &String.length/1)) * @char

  # Coordinates rounded to one decimal, so output is stable across platforms.
  defp n(x) when is_integer(x), do: Integer.to_string(x)
  defp n(x), do: x |> Float.round(1) |> Float.to_string() |> String.trim_trailing(".0")

  defp escape(s),
    do:
      s
      |> String.replace("&", "&amp;")
      |> String.replace("<", "&lt;")
      |> String.replace(">", "&gt;")
end
